// SPDX-License-Identifier: GPL-3.0-or-later
// The hash map that holds a heap layout's entries, and the key view it is searched by.
//
// Every heap layout keys its entries by (name, type, flags, tag), the published fleet's key; only
// the storage of name and tag differs (growable in v0, boxed from v1 on). The map is a
// std::unordered_map over the counting allocator, so its nodes (next pointer + key +
// value) and its bucket array are counted in each layout's net bytes. Lookups are
// heterogeneous (C++20): a KeyView over the query's bytes is hashed and compared without
// building a key, so a lookup allocates nothing.
#pragma once
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <unordered_map>
#include <utility>

#include "counting_allocator.hpp"

namespace dnsarena::sim::layouts {

struct KeyView {
  std::span<const std::uint8_t> name;  // wire form, lowercase
  std::uint16_t type = 0;
  std::uint8_t flags = 0;
  std::span<const std::uint8_t> tag;   // ECS scope (ecs_tag_bytes), empty when none
};

inline bool bytes_equal(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}
inline bool operator==(const KeyView& a, const KeyView& b) {
  return a.type == b.type && a.flags == b.flags && bytes_equal(a.name, b.name) && bytes_equal(a.tag, b.tag);
}
inline std::uint64_t hash_key(const KeyView& k) {
  std::uint64_t h = XXH3_64bits_withSeed(k.name.data(), k.name.size(), std::uint64_t{k.type} | (std::uint64_t{k.flags} << 16));
  if (!k.tag.empty()) h ^= XXH3_64bits(k.tag.data(), k.tag.size()) * 0x9E3779B97F4A7C15ULL;
  return h;
}

// Key types provide `KeyView view() const`.
template <class Key>
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(const Key& k) const noexcept { return hash_key(k.view()); }
  std::size_t operator()(const KeyView& k) const noexcept { return hash_key(k); }
};
template <class Key>
struct KeyEqual {
  using is_transparent = void;
  static KeyView view(const Key& k) { return k.view(); }
  static const KeyView& view(const KeyView& k) { return k; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    return view(a) == view(b);
  }
};

template <class Key, class Value>
using HeapMap = std::unordered_map<Key, Value, KeyHash<Key>, KeyEqual<Key>, CountingAllocator<std::pair<const Key, Value>>>;

}  // namespace dnsarena::sim::layouts

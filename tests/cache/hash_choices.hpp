// SPDX-License-Identifier: GPL-3.0-or-later
// The hashes the cache's equivalence tests run under: the real one, and two that force
// the collisions the index must survive (through Cache's test hook).
#pragma once
#include <array>
#include <cstdint>

#include "cache/test_hooks.hpp"

namespace dnsarena::test {

struct HashChoice {
  const char* name;
  cache::HashOverride hash;  // empty: the real hash
};

// All keys land in the same two buckets (first and last); the tags still differ.
inline std::uint64_t two_buckets_hash(const cache::CacheKey& k) { return 0xFFFFFFFF00000000ULL | (k.hash() & 0x00FFFFFF); }
// All keys land in bucket 0 twice over, with the same tag: every lookup compares keys.
inline std::uint64_t one_value_hash(const cache::CacheKey&) { return 0x12345; }

inline const std::array<HashChoice, 3> kHashChoices = {
    {{"real", {}}, {"two buckets", two_buckets_hash}, {"one value", one_value_hash}}};

}  // namespace dnsarena::test

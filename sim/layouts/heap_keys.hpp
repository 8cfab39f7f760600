// SPDX-License-Identifier: GPL-3.0-or-later
// The two key shapes of the heap layouts: the same fields (name, type, flags, tag),
// growable in v0, boxed from v1 on (the published fleet's change 1 applies to the key too).
#pragma once
#include <cstdint>

#include "counting_allocator.hpp"
#include "heap_map.hpp"

namespace dnsarena::sim::layouts {

// v0: std::string (32 B, 15 bytes inline) and std::vector (24 B).
struct GrowableKey {
  CString name;
  std::uint16_t type = 0;
  std::uint8_t flags = 0;
  CVector<std::uint8_t> tag;

  static GrowableKey from(const KeyView& k) {
    GrowableKey key{make_cstring(k.name), k.type, k.flags, {}};
    key.tag.assign(k.tag.begin(), k.tag.end());
    return key;
  }
  KeyView view() const { return {bytes_of(name), type, flags, bytes_of(tag)}; }
};

// v1..v5: boxed slices (16 B each, exact heap size, nothing on the heap when empty).
struct BoxedKey {
  BoxedBytes name;
  std::uint16_t type = 0;
  std::uint8_t flags = 0;
  BoxedBytes tag;

  static BoxedKey from(const KeyView& k) { return {BoxedBytes(k.name), k.type, k.flags, BoxedBytes(k.tag)}; }
  KeyView view() const { return {name.span(), type, flags, tag.span()}; }
};

static_assert(sizeof(GrowableKey) == 64, "v0 key: string 32 + type/flags 8 + vector 24");
static_assert(sizeof(BoxedKey) == 40, "boxed key: name 16 + type/flags 8 + tag 16");

}  // namespace dnsarena::sim::layouts

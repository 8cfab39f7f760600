// SPDX-License-Identifier: GPL-3.0-or-later
// Cutting an address to a prefix: the bits past `prefix` set to zero. One function for
// every place that keys, compares or sends a subnet (cache keys, ECS options, access
// rules, rate-limit buckets, layout experiments).
//
// Purpose: a subnet has one byte form, so two keys or options for the same subnet are
// byte-equal. Lives in wire/, below cache/ and dns/, so that the cache key and the ECS
// option cut a subnet the same way. Not installed (cache_key.cpp is its only user
// inside the library).
//
// Costs: one masked byte and a fill of the bytes after it; no branches per bit.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>

namespace dnsarena::wire {

// Keeps the first `prefix` bits of `address` and zeroes the rest (all of it for prefix
// 0; nothing for prefix >= 8 * size).
inline void clear_bits_past_prefix(std::span<std::uint8_t> address, unsigned prefix) {
  std::size_t i = prefix / 8u;
  if (i >= address.size()) return;
  if (prefix % 8u != 0) address[i++] &= static_cast<std::uint8_t>(0xFF00u >> (prefix % 8u));
  std::fill(address.begin() + static_cast<std::ptrdiff_t>(i), address.end(), std::uint8_t{0});
}

}  // namespace dnsarena::wire

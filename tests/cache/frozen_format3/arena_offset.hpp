// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/arena_offset.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// ArenaOffset: a 32-bit reference to an entry inside the arena, in 8-byte units.
//
// Nothing inside the segment is a raw pointer. Every entry reference is an offset from
// the arena base, and it can only be turned into an address through the object that knows
// the base: Cache::entry_address (cache.hpp, Segment::arena() + byte_offset()), also used
// by SegmentChecker. FORMAT-DEPENDENT.
//
//   value 0            : null (no entry)
//   value v >= 1       : entry at arena_base + (v - 1) * 8
//   addressable range  : kMaxArenaBytes = (2^32 - 1) * 8 bytes, just under 32 GiB
#pragma once
#include <cstdint>

namespace dnsarena::frozen3 {

inline constexpr std::uint64_t kEntryAlignment = 8;
inline constexpr std::uint64_t kMaxArenaBytes = (std::uint64_t{0xFFFFFFFFu} - 1) * kEntryAlignment;

class ArenaOffset {
public:
  constexpr ArenaOffset() = default;
  static constexpr ArenaOffset from_byte_offset(std::uint64_t byte_offset) {
    return ArenaOffset(static_cast<std::uint32_t>(byte_offset / kEntryAlignment + 1));
  }
  static constexpr ArenaOffset from_raw(std::uint32_t raw) { return ArenaOffset(raw); }

  constexpr bool is_null() const { return raw_ == 0; }
  constexpr std::uint32_t raw() const { return raw_; }
  // REQUIRES: !is_null().
  constexpr std::uint64_t byte_offset() const { return std::uint64_t{raw_ - 1} * kEntryAlignment; }
  constexpr bool operator==(const ArenaOffset&) const = default;

private:
  constexpr explicit ArenaOffset(std::uint32_t raw) : raw_(raw) {}
  std::uint32_t raw_ = 0;
};

static_assert(sizeof(ArenaOffset) == 4, "an offset must cost half a pointer");

}  // namespace dnsarena::frozen3

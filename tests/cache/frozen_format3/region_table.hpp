// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/region_table.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Region descriptors: one per arena region. FORMAT-DEPENDENT.
//
// RegionDesc (16 bytes):
//
//   offset size field       meaning
//   0      8    generation  atomic seqlock word: +1 each time the region is freed, after
//                           its entries were unlinked and before any new byte is written.
//   8      4    fill        atomic; bytes of the region holding written entries
//   12     4    reserved    0
//
// Concurrency: both fields are written only under the writer lock. Lock-free readers load
// `generation` (acquire) before copying an entry and again after (seqlock); a change means
// the region was recycled meanwhile and the copy is thrown away. The low 16 bits of the
// generation are also stored in each index slot, so a slot published before a recycle is
// recognised as stale even when the reader only looks at the region afterwards. After the
// first generation load the reader also loads `fill` (acquire) and copies only an entry
// lying wholly below it: an append of the current generation above the fill may be
// half-written, and the seqlock re-check cannot see it (the generation does not move
// for appends).
// NOTE: a reclaim walk does not change the region's bytes (survivors are copied to the
// head), so the generation stays put during the walk and readers keep hitting its entries
// until the region is actually freed. A stale slot could only pass the tag check if its
// region were recycled a multiple of 65,536 times while one reader was descheduled
// between loading the slot and loading the generation, and an entry of the same key then
// lay at the same offset below the fill; the seqlock re-check still catches any write
// that overlapped the copy. (Format 2 and older: 8 bits, 256 recycles.)
#pragma once
#include <atomic>
#include <cstdint>

namespace dnsarena::frozen3 {

struct RegionDesc {
  std::atomic<std::uint64_t> generation;
  std::atomic<std::uint32_t> fill;
  std::uint32_t reserved;
};
static_assert(sizeof(RegionDesc) == 16, "region table entries are 16 bytes");

inline std::uint32_t generation_tag(std::uint64_t generation) {
  return static_cast<std::uint32_t>(generation & 0xFFFF);  // kGenTagMask (index_slot.hpp)
}

}  // namespace dnsarena::frozen3

// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/region_table.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
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
// the region was recycled meanwhile and the copy is thrown away. The low 8 bits of the
// generation are also stored in each index slot, so a slot published before a recycle is
// recognised as stale even when the reader only looks at the region afterwards.
// NOTE: a reclaim walk does not change the region's bytes (survivors are copied to the
// head), so the generation stays put during the walk and readers keep hitting its entries
// until the region is actually freed. A stale slot could only pass the tag check if its
// region were recycled a multiple of 256 times while one reader was descheduled between
// two loads and a same-key entry landed at the same offset; the seqlock re-check then
// still catches any write that overlapped the copy.
#pragma once
#include <atomic>
#include <cstdint>

namespace dnsarena::frozen2 {

struct RegionDesc {
  std::atomic<std::uint64_t> generation;
  std::atomic<std::uint32_t> fill;
  std::uint32_t reserved;
};
static_assert(sizeof(RegionDesc) == 16, "region table entries are 16 bytes");

inline std::uint32_t generation_tag(std::uint64_t generation) {
  return static_cast<std::uint32_t>(generation & 0xFF);
}

}  // namespace dnsarena::frozen2

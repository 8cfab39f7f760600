// SPDX-License-Identifier: GPL-3.0-or-later
// Format 2 (commit f8ce8ad up to 1ad24aa^): what a reader needs that differs from the
// current format. FORMAT-DEPENDENT. Frozen: never edit a released format's description.
//
// Segment: header 4 KiB (as today) | StatSlot[stat_slots], 256 B each | RegionDesc[],
// 16 B (as today) | Bucket[], 64 B (as today) | arena (as today). With the default 64
// stat slots the regions start at 4096 + 64 * 256 = 20480 (format 4: 36864).
//
// StatSlot (256 bytes; counters only, nothing a migration keeps):
//
//   offset size field
//   0      4    owner_pid
//   4      4    role
//   8      8    claimed_unix
//   16     8    worker_index
//   24   176    counters (22 x u64)
//   200   56    padding
//
// Index slot (one u64):
//
//   |63 ............ 32|31 ...... 24| 23 |22 ............. 0|
//   |-- entry offset --|-- gen tag --|hit |----- hash tag ----|
//
//   entry offset : ArenaOffset raw value, as today (0 = empty)
//   gen tag      : low 8 bits of the entry's region generation when the slot was written
//
// Entries, key blobs and region descriptors: identical to format 4.
#pragma once
#include "format_traits.hpp"

namespace dnsarena::cache::legacy {

inline constexpr FormatTraits kFormat2{2, 256, 24, 0xFF};

}  // namespace dnsarena::cache::legacy

// SPDX-License-Identifier: GPL-3.0-or-later
// Format 3 (commit 1ad24aa up to ff9406f^): what a reader needs that differs from the
// current format. FORMAT-DEPENDENT. Frozen: never edit a released format's description.
//
// Segment: header 4 KiB (as today) | StatSlot[stat_slots], 256 B each | RegionDesc[],
// 16 B (as today) | Bucket[], 64 B (as today) | arena (as today).
//
// StatSlot (256 bytes; counters only, nothing a migration keeps):
//
//   offset size field
//   0      4    owner_pid
//   4      4    role
//   8      8    claimed_unix
//   16     8    worker_index
//   24   232    counters (29 x u64, full); the last slot is shared, never owned
//
// Index slot (one u64), as in format 4:
//
//   |63 ............ 32|31 ...... 16| 15 |14 ............. 0|
//   |-- entry offset --|-- gen tag --|hit |----- hash tag ----|
//
//   gen tag      : low 16 bits of the entry's region generation when the slot was written
//
// Entries, key blobs and region descriptors: identical to format 4.
#pragma once
#include "format_traits.hpp"

namespace dnsarena::cache::legacy {

inline constexpr FormatTraits kFormat3{3, 256, 16, 0xFFFF};

}  // namespace dnsarena::cache::legacy

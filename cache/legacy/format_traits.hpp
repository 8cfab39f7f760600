// SPDX-License-Identifier: GPL-3.0-or-later
// What differs between the segment format versions this build can still read.
// FORMAT-DEPENDENT.
//
// Formats 2 to 5 share the segment header (segment_header.hpp: same fields, same
// offsets, same identity checksum), the region descriptor (region_table.hpp), the
// entry encoding (entry_format.hpp; format 5 gives meaning to the info byte's bits 6-7,
// zero in every older format) and the key blob (cache_key.hpp). What moved:
//
//   version  StatSlot  index slot gen tag   hit bit  hash tag   diagram
//   2        256 B     bits 24..31 (8)      bit 23   bits 0..22  format2_layout.hpp
//   3        256 B     bits 16..31 (16)     bit 15   bits 0..14  format3_layout.hpp
//   4        512 B     bits 16..31 (16)     bit 15   bits 0..14  format4_layout.hpp
//   5        512 B     bits 16..31 (16)     bit 15   bits 0..14  the current headers
//
// The StatSlot size moves every part offset after the stat slots (regions, index,
// arena), which the header records; the reader checks those offsets against the ones
// the format computes from the geometry. The gen tag's width decides whether a slot is
// consistent with its region's generation (a stale slot is skipped).
//
// Bumping kFormatVersion (format_version.hpp) now means: describe the version being
// replaced here (and in its own formatN_layout.hpp), so that a segment of it is
// migrated, not discarded (segment_migration.hpp).
#pragma once
#include <cstdint>

namespace dnsarena::cache::legacy {

struct FormatTraits {
  std::uint32_t version;
  std::uint32_t stat_slot_bytes;  // sizeof(StatSlot) in that format
  unsigned gen_tag_shift;         // the index slot's gen tag: (slot >> shift) & mask
  std::uint32_t gen_tag_mask;     // also the bits of the region generation it holds
};

// The traits of `version`, or nullptr when this build cannot read it (1: never
// released with a reader; anything newer than kFormatVersion).
const FormatTraits* format_traits(std::uint32_t version);

// The oldest version format_traits() knows (the newest is kFormatVersion), for messages.
inline constexpr std::uint32_t kOldestReadableFormat = 2;

}  // namespace dnsarena::cache::legacy

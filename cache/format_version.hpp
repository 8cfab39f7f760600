// SPDX-License-Identifier: GPL-3.0-or-later
// Versions of the shared-memory format, and when to bump them.
//
// FORMAT-DEPENDENT: every file whose code depends on the binary layout of the segment
// carries the tag "FORMAT-DEPENDENT" next to that code; grep for it before changing a
// layout.
//
// Bump kFormatVersion when any of these change: the segment header (segment_header.hpp),
// the stat slot layout (stat_slots.hpp), the region descriptor (region_table.hpp), the
// index slot encoding (index_slot.hpp), the entry encoding (entry_format.hpp), or the
// key blob (cache_key.hpp). Segment::attach refuses another version; Segment::open with
// OpenPolicy::migrate (what `dnsarena serve` uses) migrates a segment of an older
// version warm (segment_migration.hpp) through a reader of that version.
//
// Bumping therefore now requires adding a reader for the version being replaced:
// describe what differs in cache/legacy/format<N>_layout.hpp (byte diagrams of the old
// parts), list it in cache/legacy/format_traits.cpp (and update its static_assert), and
// extend cache/legacy/segment_reader.cpp if the difference is more than a StatSlot size
// or a gen tag width (a changed entry encoding or key blob needs a decoder that
// re-encodes). Before the bump, while the tree still writes the old format, add its
// segment image to tests/cache/fixtures/ (a row in format_fixtures.hpp, then
// `tests/cache/fixtures/regenerate.sh HEAD format_fixture_writer`; fixtures/README.md):
// the migration tests load every image listed there.
//
// kBuildFeatures records properties of the build that also change the meaning of the
// bytes (byte order, pointer width). They are compared on attach like the version.
#pragma once
#include <cstdint>

namespace dnsarena::cache {

// "DNSARENA" read as a little-endian u64.
inline constexpr std::uint64_t kSegmentMagic = 0x414E455241534E44ULL;

// 1: first layout (12-byte entry header, 64-bit index slots with 8-bit generation).
// 2: StatSlot grows to 256 bytes (counter index_displacements).
// 3: index slot gen tag 8 -> 16 bits, hash tag 23 -> 15 bits (index_slot.hpp); the
//    last stat slot is reserved for sharers (stat_slots.hpp); the counter
//    writer_lock_unavailable is appended (appending a counter alone needs no bump).
// 4: StatSlot grows to 512 bytes (room for 61 counters; format 3 was full at 29).
// 5: the entry's info byte bits 6-7 hold its DNSSEC verdict (entry_format.hpp); a format
//    4 entry (bits zero) reads as one cached without validation.
inline constexpr std::uint32_t kFormatVersion = 5;

// bit 0: little-endian; bit 1: 64-bit pointers; bit 2: pthread_mutex_t is 40 bytes.
inline constexpr std::uint64_t kBuildFeatures = 0x7;

}  // namespace dnsarena::cache

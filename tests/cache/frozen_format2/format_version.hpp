// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/format_version.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Versions of the shared-memory format, and when to bump them.
//
// FORMAT-DEPENDENT: every file whose code depends on the binary layout of the segment
// carries the tag "FORMAT-DEPENDENT" next to that code; grep for it before changing a
// layout.
//
// Bump kFormatVersion when any of these change: the segment header (segment_header.hpp),
// the stat slot layout (stat_slots.hpp), the region descriptor (region_table.hpp), the
// index slot encoding (index_slot.hpp), the entry encoding (entry_format.hpp), or the
// key blob (cache_key.hpp). A process that finds another version refuses to attach
// (or, when told to reset, destroys and recreates the segment).
//
// kBuildFeatures records properties of the build that also change the meaning of the
// bytes (byte order, pointer width). They are compared on attach like the version.
#pragma once
#include <cstdint>

namespace dnsarena::frozen2 {

// "DNSARENA" read as a little-endian u64.
inline constexpr std::uint64_t kSegmentMagic = 0x414E455241534E44ULL;

// 1: first layout (12-byte entry header, 64-bit index slots with 8-bit generation).
// 2: StatSlot grows to 256 bytes (counter index_displacements).
inline constexpr std::uint32_t kFormatVersion = 2;

// bit 0: little-endian; bit 1: 64-bit pointers; bit 2: pthread_mutex_t is 40 bytes.
inline constexpr std::uint64_t kBuildFeatures = 0x7;

}  // namespace dnsarena::frozen2

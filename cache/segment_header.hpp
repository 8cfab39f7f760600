// SPDX-License-Identifier: GPL-3.0-or-later
// The segment header: the first 4 KiB of the shared-memory object. FORMAT-DEPENDENT.
//
// Whole segment (every part starts at a multiple of 64; the arena at a multiple of 4096):
//
//   +-----------------------+ 0
//   | SegmentHeader  4 KiB  |  identity, geometry, part offsets, writer lock, writer state
//   +-----------------------+ stats_offset
//   | StatSlot[stat_slots]  |  per-process counters, 512 B each   (stat_slots.hpp)
//   +-----------------------+ regions_offset
//   | RegionDesc[regions]   |  generation + fill per region, 16 B (region_table.hpp)
//   +-----------------------+ index_offset
//   | Bucket[buckets]       |  8 x 64-bit slots = one cache line  (index_slot.hpp)
//   +-----------------------+ arena_offset
//   | region 0 | region 1 | ... | region N-1     log-structured entry storage
//   +-----------------------+ total_bytes
//
// SegmentHeader:
//
//   offset size field               meaning
//   0      8    magic               kSegmentMagic ("DNSARENA")
//   8      4    format_version      kFormatVersion
//   12     4    header_bytes        sizeof(SegmentHeader) = 4096
//   16     8    build_features      kBuildFeatures
//   24     8    created_unix        wall-clock seconds at creation
//   32     8    max_entries         live-entry limit
//   40     8    arena_bytes         region_count * region_bytes
//   48     4    region_bytes        bytes per arena region (a power of two)
//   52     4    region_count        >= 3
//   56     8    bucket_count        index buckets (8 slots each)
//   64     4    stat_slots          number of StatSlot
//   68     4    reserved0           0
//   72     8    stats_offset        \  (part offsets)
//   80     8    regions_offset       |  byte offsets of the parts from the segment base
//   88     8    index_offset         |
//   96     8    arena_offset         |
//   104    8    total_bytes         /   size of the shared-memory object
//   112    8    identity_checksum   XXH64 of bytes [0, 112): a damaged header is refused
//   120    4    init_state          kInitReady once the creator finished; written last
//   124    4    reserved1           0
//   128    40   writer_lock         robust, process-shared pthread_mutex_t
//   168    24   (padding to 192)
//   192    8    head_and_free       atomic; |-- head region:32 --|-- free regions:32 --|
//   200    8    reclaiming_region   atomic; region under reclaim, or kNoRegion
//   208    8    live_entries        atomic; entries linked from the index
//   216    8    bytes_in_use        atomic; sum of region fills (arena bytes written)
//   224    8    repairs             atomic; times a writer repaired after a dead owner
//   232    8    clock_high_water    atomic; largest `now` a writer has seen
//   240  3856   reserved            zero
//
// Concurrency: bytes [0, 128) are written once by the creator before init_state is set
// (release) and are read-only afterwards. writer_lock covers every field from 192 on:
// they are written only while holding it. Readers may load them (relaxed) for statistics.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "format_version.hpp"

namespace dnsarena::cache {

inline constexpr std::uint32_t kInitReady = 0x59444552;  // "REDY"
inline constexpr std::uint64_t kNoRegion = ~std::uint64_t{0};
inline constexpr std::size_t kIdentityBytes = 112;

struct SegmentHeader {
  // --- identity and geometry: immutable after creation, covered by identity_checksum ---
  std::uint64_t magic;
  std::uint32_t format_version;
  std::uint32_t header_bytes;
  std::uint64_t build_features;
  std::uint64_t created_unix;
  std::uint64_t max_entries;
  std::uint64_t arena_bytes;
  std::uint32_t region_bytes;
  std::uint32_t region_count;
  std::uint64_t bucket_count;
  std::uint32_t stat_slots;
  std::uint32_t reserved0;
  std::uint64_t stats_offset;
  std::uint64_t regions_offset;
  std::uint64_t index_offset;
  std::uint64_t arena_offset;
  std::uint64_t total_bytes;
  std::uint64_t identity_checksum;
  std::atomic<std::uint32_t> init_state;
  std::uint32_t reserved1;
  // --- writer lock and the state it covers ---
  alignas(64) pthread_mutex_t writer_lock;
  alignas(64) std::atomic<std::uint64_t> head_and_free;
  std::atomic<std::uint64_t> reclaiming_region;
  std::atomic<std::uint64_t> live_entries;
  std::atomic<std::uint64_t> bytes_in_use;
  std::atomic<std::uint64_t> repairs;
  std::atomic<std::uint64_t> clock_high_water;
  std::uint8_t reserved[4096 - 240];
};

static_assert(sizeof(SegmentHeader) == 4096, "the header occupies exactly one page");
static_assert(offsetof(SegmentHeader, format_version) == 8, "version must sit right after the magic");
static_assert(offsetof(SegmentHeader, max_entries) == 32, "geometry offsets are part of the format");
static_assert(offsetof(SegmentHeader, total_bytes) == 104, "part offsets are part of the format");
static_assert(offsetof(SegmentHeader, identity_checksum) == kIdentityBytes,
              "the checksum covers exactly the bytes before it");
static_assert(offsetof(SegmentHeader, init_state) == 120, "init_state is written last by the creator");
static_assert(offsetof(SegmentHeader, writer_lock) == 128, "the lock starts its own cache line");
static_assert(sizeof(pthread_mutex_t) == 40, "kBuildFeatures bit 2 assumes a 40-byte mutex");
static_assert(offsetof(SegmentHeader, head_and_free) == 192, "writer state starts a cache line");
static_assert(offsetof(SegmentHeader, clock_high_water) == 232, "writer state layout is documented");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "atomics in shared memory must be lock-free");

inline std::uint32_t head_of(std::uint64_t head_and_free) { return static_cast<std::uint32_t>(head_and_free >> 32); }
inline std::uint32_t free_of(std::uint64_t head_and_free) { return static_cast<std::uint32_t>(head_and_free); }
inline std::uint64_t pack_head_free(std::uint32_t head, std::uint32_t free_regions) {
  return (std::uint64_t{head} << 32) | free_regions;
}

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// The index: open addressing over fixed-size buckets, two choices per key.
// FORMAT-DEPENDENT.
//
// A bucket is one 64-byte cache line of eight 64-bit slots. A key hashes to two buckets
// (b1, b2); it lives in one of their 16 slots. Inserting picks the less loaded bucket.
// When both are full, one cuckoo step: a resident of b1 or b2 whose other bucket has a
// free slot is copied there (published first) and its old slot takes the new entry
// (counted as index_displacements; cache_write.cpp, place()). Only when no resident can
// move is the slot whose entry is oldest in the log evicted (counted as
// conflict_evictions). With buckets sized for 6.4 entries each at full capacity (load
// 0.8), that is rare. Lookups read both lines (independent loads, overlapped by the CPU
// or by prefetch) and then the entry: two dependent memory accesses.
//
// Slot (one u64, published and removed with one atomic store):
//
//   |63 ............ 32|31 ...... 16| 15 |14 ............. 0|
//   |-- entry offset --|-- gen tag --|hit |----- hash tag ----|
//
//   entry offset : ArenaOffset raw value (0 = empty slot)
//   gen tag      : generation_tag() (16 bits) of the entry's region when the slot was
//                  written; a reader whose region generation differs knows the slot is
//                  stale. 16 bits: a stalled reader is fooled only if the region was
//                  recycled a multiple of 65,536 times while it stalled (region_table.hpp)
//   hit          : set (by CAS, only if the slot is unchanged) when a lookup returns
//                  the entry; read by reclaim for the second chance
//   hash tag     : 15 bits of the key hash, to skip most non-matching entries
//
// Why 16 + 15 bits (formats 1-2, read by cache/legacy/, have an 8-bit gen tag and a
// 23-bit hash tag): 256 recycles are minutes of a busy small arena; 65,536 are hours to
// days. The hash tag gives the bits: with 15 other slots in a key's two buckets, 15 bits
// still skip all but 1 in 2,000 of the non-matching entries a lookup would otherwise
// read (23 bits: 1 in 500,000).
//
// Concurrency: slots are written by writers holding the writer lock (store, release),
// except the hit bit, which readers set with compare_exchange: it only ever succeeds on
// the exact value they validated, so it cannot resurrect or alter another entry.
#pragma once
#include <atomic>
#include <cstdint>

#include "arena_offset.hpp"

namespace dnsarena::cache {

inline constexpr unsigned kSlotsPerBucket = 8;
inline constexpr unsigned kGenTagShift = 16;
inline constexpr std::uint32_t kGenTagMask = 0xFFFF;
inline constexpr std::uint64_t kSlotHitBit = std::uint64_t{1} << 15;
inline constexpr std::uint32_t kHashTagMask = (1u << 15) - 1;

struct alignas(64) Bucket {
  std::atomic<std::uint64_t> slots[kSlotsPerBucket];
};
static_assert(sizeof(Bucket) == 64, "a bucket is exactly one cache line");
static_assert((std::uint64_t{kGenTagMask} << kGenTagShift | kSlotHitBit | kHashTagMask) == 0xFFFFFFFFu &&
                  (std::uint64_t{kGenTagMask} << kGenTagShift & kSlotHitBit) == 0 && (kSlotHitBit & kHashTagMask) == 0,
              "gen tag, hit bit and hash tag tile the low 32 bits (the offset owns the high 32)");

inline std::uint64_t make_slot(ArenaOffset off, std::uint32_t gen_tag, std::uint32_t hash_tag) {
  return (std::uint64_t{off.raw()} << 32) | (std::uint64_t{gen_tag & kGenTagMask} << kGenTagShift) |
         (hash_tag & kHashTagMask);
}
inline ArenaOffset slot_offset(std::uint64_t s) { return ArenaOffset::from_raw(static_cast<std::uint32_t>(s >> 32)); }
inline std::uint32_t slot_gen_tag(std::uint64_t s) { return static_cast<std::uint32_t>(s >> kGenTagShift) & kGenTagMask; }
inline std::uint32_t slot_hash_tag(std::uint64_t s) { return static_cast<std::uint32_t>(s) & kHashTagMask; }
inline bool slot_hit(std::uint64_t s) { return (s & kSlotHitBit) != 0; }

// Which buckets and tag a 64-bit key hash maps to (fast range reduction, no modulo).
struct IndexPosition {
  std::uint64_t bucket1;
  std::uint64_t bucket2;
  std::uint32_t hash_tag;
};
inline IndexPosition index_position(std::uint64_t hash, std::uint64_t bucket_count) {
  const std::uint32_t lo = static_cast<std::uint32_t>(hash);
  const std::uint32_t hi = static_cast<std::uint32_t>(hash >> 32);
  IndexPosition p;
  p.bucket1 = (std::uint64_t{lo} * bucket_count) >> 32;
  p.bucket2 = (std::uint64_t{hi} * bucket_count) >> 32;
  p.hash_tag = static_cast<std::uint32_t>((hash >> 20) ^ hash) & kHashTagMask;
  return p;
}

}  // namespace dnsarena::cache

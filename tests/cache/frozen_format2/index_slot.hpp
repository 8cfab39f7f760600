// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/index_slot.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// The index: open addressing over fixed-size buckets, two choices per key.
// FORMAT-DEPENDENT.
//
// A bucket is one 64-byte cache line of eight 64-bit slots. A key hashes to two buckets
// (b1, b2); it lives in one of their 16 slots. Inserting picks the less loaded bucket;
// when both are full, the slot whose entry is oldest in the log is evicted (counted as
// conflict_evictions). With buckets sized for 6.4 entries each at full capacity (load
// 0.8), that is rare. Lookups read both lines (independent loads, overlapped by the CPU
// or by prefetch) and then the entry: two dependent memory accesses.
//
// Slot (one u64, published and removed with one atomic store):
//
//   |63 ............ 32|31 ...... 24| 23 |22 ............. 0|
//   |-- entry offset --|-- gen tag --|hit |----- hash tag ----|
//
//   entry offset : ArenaOffset raw value (0 = empty slot)
//   gen tag      : generation_tag() of the entry's region when the slot was written;
//                  a reader whose region generation differs knows the slot is stale
//   hit          : set (by CAS, only if the slot is unchanged) when a lookup returns
//                  the entry; read by reclaim for the second chance
//   hash tag     : 23 bits of the key hash, to skip most non-matching entries
//
// Concurrency: slots are written by writers holding the writer lock (store, release),
// except the hit bit, which readers set with compare_exchange: it only ever succeeds on
// the exact value they validated, so it cannot resurrect or alter another entry.
#pragma once
#include <atomic>
#include <cstdint>

#include "arena_offset.hpp"

namespace dnsarena::frozen2 {

inline constexpr unsigned kSlotsPerBucket = 8;
inline constexpr std::uint64_t kSlotHitBit = std::uint64_t{1} << 23;
inline constexpr std::uint32_t kHashTagMask = (1u << 23) - 1;

struct alignas(64) Bucket {
  std::atomic<std::uint64_t> slots[kSlotsPerBucket];
};
static_assert(sizeof(Bucket) == 64, "a bucket is exactly one cache line");

inline std::uint64_t make_slot(ArenaOffset off, std::uint32_t gen_tag, std::uint32_t hash_tag) {
  return (std::uint64_t{off.raw()} << 32) | (std::uint64_t{gen_tag & 0xFF} << 24) | (hash_tag & kHashTagMask);
}
inline ArenaOffset slot_offset(std::uint64_t s) { return ArenaOffset::from_raw(static_cast<std::uint32_t>(s >> 32)); }
inline std::uint32_t slot_gen_tag(std::uint64_t s) { return static_cast<std::uint32_t>(s >> 24) & 0xFF; }
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

}  // namespace dnsarena::frozen2

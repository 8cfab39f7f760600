// SPDX-License-Identifier: GPL-3.0-or-later
// Bringing the index buckets a writer is about to use into the cache with real loads.
//
// The writer's batch paths (insert_batch, the reclaim walk) know a whole group of index
// buckets before they need them. They load one word of each in a tight
// loop, so the misses of the group overlap (memory-level parallelism), instead of paying
// them one after another inside the locked loop.
//
// Loads, not __builtin_prefetch: a prefetch is a hint the CPU may drop (a TLB miss, full
// miss buffers), and with 4 KiB pages it is dropped often enough that the first bucket
// load under the lock stalls as if nothing had been prefetched; a load is not dropped.
//
// Every load is a relaxed atomic load: other processes write these words concurrently
// (data-race-free as relaxed_copy.hpp), and the values are thrown away.
#pragma once
#include <cstdint>

#include "index_slot.hpp"

namespace dnsarena::cache {

// Keeps `v` alive without using it, so the loads that made it are not removed.
inline void keep_loaded(std::uint64_t v) { asm volatile("" : : "r"(v)); }

// Loads one word of both buckets of `pos`; returns it for keep_loaded().
inline std::uint64_t touch_buckets(const Bucket* buckets, const IndexPosition& pos) {
  return buckets[pos.bucket1].slots[0].load(std::memory_order_relaxed) +
         buckets[pos.bucket2].slots[0].load(std::memory_order_relaxed);
}

}  // namespace dnsarena::cache

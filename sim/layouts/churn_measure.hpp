// SPDX-License-Identifier: GPL-3.0-or-later
// Resident memory of a heap layout under steady-state churn, measured under jemalloc.
//
// Purpose: the fleet model charges a heap layout its allocated bytes per live entry
// (size-class rounded); a long-running cache also holds pages that are partly free
// (slabs whose other regions were freed by expiry or eviction) and the allocator's
// metadata. measure_churn() measures the ratio resident / allocated after a cache has
// been filled to capacity and then churned for a while, per heap layout (v0..v5), on
// one profile's mix. The arena layout is not measured: its memory is its segment
// (memory_model.hpp in sim/fleet).
//
// Method (per layout, on its own thread-bound jemalloc arena, thread cache off, so
// nothing else the process allocates is counted and every free reaches the arena):
//   fill      entries 0..C-1 (C = `entries`), at simulated time 0;
//   churn     2 x C inserts of fresh entries (C, C+1, ...) at rate 2 x C / mean TTL per
//             simulated second: the TTL-only working set is twice the capacity, as in a
//             capacity-bound cache (the fleet's caches fill). Before each insert,
//             entries whose TTL has ended are erased (expiry, in expiry order); while
//             more than C entries are held, a uniformly random one is erased (eviction;
//             a CLOCK or LRU victim is uncorrelated with where its blocks sit in memory,
//             as a random one is).
//   read      `epoch`, then stats.arenas.<a>.{resident, pactive, retained} and the
//             layout's counted allocated bytes; then arena.<a>.purge (the unused dirty
//             pages, which jemalloc returns to the OS after dirty_decay_ms, 10 s by
//             default, in a long-running process) and resident again.
//   ratio     resident after purge / allocated: what stays resident per allocated byte
//             in a steady state (partly used slabs, metadata). The unpurged figure is
//             reported beside it (an upper bound: pages freed in the last moments).
// Without jemalloc (sanitizer builds) measured = false and the ratio is 1.
//
// Cost: per layout 3 x C inserts and 2 x C erases with the thread cache off, a few
// seconds for C = 200,000 on this machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim {

struct ChurnRow {
  std::string layout;
  std::uint64_t live_entries = 0;   // entries held at the end (C, less generated entries sharing a key)
  double alloc_bytes = 0;           // allocated bytes per live entry (the layout's counter)
  double active_bytes = 0;          // jemalloc active pages per live entry
  double resident_bytes = 0;        // resident per live entry after purging unused dirty pages
  double resident_unpurged_bytes = 0;  // resident per live entry before the purge
  double retained_bytes = 0;        // retained (unmapped-from-use, not resident) per live entry
  double resident_ratio = 1;        // resident_bytes / alloc_bytes
  bool measured = false;            // false without jemalloc: ratio 1
};

// One row per heap layout (v0..v5). REQUIRES: entries >= 1.
std::vector<ChurnRow> measure_churn(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed);

// Whether measure_churn() reads jemalloc (false in sanitizer builds).
bool churn_uses_jemalloc();

}  // namespace dnsarena::sim

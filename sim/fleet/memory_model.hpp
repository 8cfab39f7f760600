// SPDX-License-Identifier: GPL-3.0-or-later
// Resident memory of one instance's cache, by layout.
//
// Heap layouts (v0..v5) under jemalloc: resident = live entries x allocated bytes per
// entry (size-class rounded, as measured by the layouts code) x the layout's resident /
// allocated ratio, measured after a fill to capacity and steady churn on the same mix
// (sim/layouts/churn_measure.hpp: partly used slabs and allocator metadata). Freed
// entries return to jemalloc and its unused dirty pages decay back to the OS within
// seconds, so resident memory follows live entries. NOTE: a ratio of 1 (allocated bytes
// only) was tried and rejected: the seed fleet's after-state came out at p99 4.14 GB,
// p90 3.08 GB, 22% and 19% under the published 5.3 / 3.8 GB.
//
// The arena (our shared segment): sized at start for `capacity` entries; the index
// (capacity / 6.4 buckets of 64 B) and the arena (capacity x arena bytes per entry x
// 1.25 slack for dead entries and free regions). Pages once touched stay resident:
// arena resident = min(arena size, inserts since restart x bytes per entry); index pages
// are touched at random: resident = index x (1 - exp(-inserts / index pages)).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

namespace dnsarena::sim::fleet {

struct LayoutMemory {
  std::string layout;
  bool arena = false;
  double bytes_per_entry = 0;  // heap: resident bytes (allocated x ratio); arena: segment bytes per live entry at capacity
  double resident_ratio = 1;   // heap: measured resident / allocated (1 for the arena)
};

inline constexpr double kArenaSlack = 1.25;
inline constexpr double kIndexBytesPerEntry = 64.0 / 6.4;  // cache::kEntriesPerBucketAtCapacity

inline double cache_resident_bytes(const LayoutMemory& m, double capacity, double live, double inserted) {
  if (!m.arena) return live * m.bytes_per_entry;
  const double index_bytes = capacity * kIndexBytesPerEntry;
  const double per_entry = std::max(8.0, m.bytes_per_entry - kIndexBytesPerEntry);
  const double arena_bytes = capacity * per_entry * kArenaSlack;
  const double pages = std::max(1.0, index_bytes / 4096.0);
  return std::min(arena_bytes, inserted * per_entry) + index_bytes * -std::expm1(-inserted / pages);
}

inline LayoutMemory layout_memory(const std::string& name, double net_bytes, double alloc_bytes,
                                  double resident_ratio = 1.0) {
  LayoutMemory m;
  m.layout = name;
  m.arena = name == "arena";
  m.resident_ratio = m.arena ? 1.0 : resident_ratio;
  m.bytes_per_entry = m.arena ? net_bytes : alloc_bytes * m.resident_ratio;
  return m;
}

}  // namespace dnsarena::sim::fleet

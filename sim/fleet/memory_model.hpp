// Resident memory of one instance's cache, by layout.
//
// Heap layouts (v0..v5) under jemalloc: resident = live entries x allocated bytes per
// entry (size-class rounded, as measured by the layouts code). Freed entries return to
// jemalloc and its dirty pages decay back to the OS within seconds, so resident memory
// follows live entries. NOTE: fragmentation beyond size classes and retained pages are
// not modelled (no measurement of them yet); this under-states heap RSS somewhat.
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
  double bytes_per_entry = 0;  // heap: allocated bytes; arena: segment bytes per live entry at capacity
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

inline LayoutMemory layout_memory(const std::string& name, double net_bytes, double alloc_bytes) {
  LayoutMemory m;
  m.layout = name;
  m.arena = name == "arena";
  m.bytes_per_entry = m.arena ? net_bytes : alloc_bytes;
  return m;
}

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// Keeping first-touch page faults out of the layout timings.
//
// On this kind of VM a first-touch page fault costs tens of microseconds, so whichever
// layout first touches fresh memory would pay far more per insert than the others. The
// benchmark therefore pre-faults: heap layouts run after an untimed warm-up fill whose
// pages jemalloc keeps (HeapPageRetention disables its decay-based purging meanwhile),
// and the arena's segment is populated before its fill (prefault_range). Memory
// accounting is unaffected: it counts requests, not pages.
#pragma once
#include <cstddef>

namespace dnsarena::sim::layouts {

// While alive, jemalloc keeps freed pages instead of returning them to the OS (all
// initialised arenas' dirty and muzzy decay set to -1); restores the previous settings after.
// Does nothing without jemalloc.
class HeapPageRetention {
public:
  HeapPageRetention();
  ~HeapPageRetention();
  HeapPageRetention(const HeapPageRetention&) = delete;
  HeapPageRetention& operator=(const HeapPageRetention&) = delete;

private:
  long dirty_ms_ = 0, muzzy_ms_ = 0;
  bool active_ = false;
};

// Faults in [p, p + n) for writing (MADV_POPULATE_WRITE, else one read per page).
void prefault_range(void* p, std::size_t n);

}  // namespace dnsarena::sim::layouts

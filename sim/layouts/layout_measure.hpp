// SPDX-License-Identifier: GPL-3.0-or-later
// Measuring entry layouts: bytes, allocations and speed of each of the seven layouts.
//
// `dnsarena-lab sim layouts` and the fleet simulator both call measure_layouts(): it fills
// each layout (v0..v5 on the heap, then the real shared-memory arena) with the same
// `entries` generated entries (sim::EntryGenerator, `profile`, `seed`), and reports per
// entry: net bytes (sizes requested), allocated bytes (as jemalloc rounds them),
// allocations, and, when `measure_speed`, insert throughput and p50 lookup latency
// (find + build the DNS response).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/entry_generator.hpp"

namespace dnsarena::sim {

struct LayoutRow {
  std::string layout;
  double net_bytes, alloc_bytes, allocs, insert_per_s, lookup_ns_p50;
};

// One row per layout, in layout_names() order. Speed fields are 0 unless measure_speed.
std::vector<LayoutRow> measure_layouts(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                       bool measure_speed);

std::vector<std::string> layout_names();  // "v0".."v5","arena"

// measure_layouts(), also reporting each layout's live entries after the fill (in row order). The
// arena can hold slightly fewer than `entries`: its index evicts a key whose two buckets
// are both full (conflict_evictions). Rows are per live entry; lookups of lost keys are
// left out of the latency sample.
// (A distinct name, not an overload: callers take measure_layouts' address.)
std::vector<LayoutRow> measure_layouts_with_live(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                                 bool measure_speed, std::vector<std::uint64_t>* live_entries);

}  // namespace dnsarena::sim

// Measuring entry layouts: bytes, allocations and speed of each of the seven layouts.
//
// `dnsarena sim layouts` and the fleet simulator both call measure_layouts(): it fills
// each layout (v0..v5 on the heap, then the real shared-memory arena) with the same
// `entries` generated entries (sim::EntryGenerator, `profile`, `seed`), and reports per
// entry: net bytes (sizes requested), allocated bytes (as jemalloc rounds them),
// allocations, and, when `measure_speed`, insert throughput and p50 lookup latency
// (find + build the DNS response).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/seed_mix.hpp"

namespace dnsarena::sim {

struct LayoutRow {
  std::string layout;
  double net_bytes, alloc_bytes, allocs, insert_per_s, lookup_ns_p50;
};

// One row per layout, in layout_names() order. Speed fields are 0 unless measure_speed.
std::vector<LayoutRow> measure_layouts(const MixProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                       bool measure_speed);

std::vector<std::string> layout_names();  // "v0".."v5","arena"

}  // namespace dnsarena::sim

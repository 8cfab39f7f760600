// SPDX-License-Identifier: GPL-3.0-or-later
// Bytes per entry per layout, measured on each profile's own mix, cached in a file.
//
// Beside the bytes, each heap layout's resident / allocated ratio after a fill to
// capacity and steady churn (expiry + eviction) under jemalloc, measured on the same
// mix (measure_churn, sim/layouts/churn_measure.hpp): the memory model charges a heap
// layout allocated bytes x that ratio.
//
// The fleet model never uses typed-in byte counts: for each distinct TrafficProfile it asks
// the layouts code (sim/layouts/layout_measure.hpp, measure_layouts(profile, N, seed,
// false)) for net and allocated bytes per entry of every layout, and stores the rows in
// a JSON file keyed by a hash of the profile, N and seed. The file records the build
// (project version + cache format version); rows from another build are measured again.
//
// Cost: one measurement per new profile (seconds for 200,000 entries x 7 layouts, plus
// the churn of 6 heap layouts: about 3 x 200,000 inserts each);
// afterwards a file read.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::fleet {

struct LayoutBytes {
  std::string layout;
  double net_bytes = 0;    // bytes requested per entry
  double alloc_bytes = 0;  // bytes allocated per entry (jemalloc size classes; arena: segment bytes)
  // Heap layouts, after fill + steady churn under jemalloc (sim/layouts/churn_measure.hpp),
  // each per allocated byte: resident (after purging unused dirty pages), active pages,
  // retained (virtual, not resident). 1, 1, 0 for the arena and when not measured.
  double resident_ratio = 1, active_ratio = 1, retained_ratio = 0;
};

// Measures all layouts for a profile (tests inject a fake one).
using LayoutMeasurer = std::function<std::vector<LayoutBytes>(const TrafficProfile&, std::uint64_t entries, std::uint64_t seed)>;

// The real measurer (measure_layouts and measure_churn from sim/layouts). Throws when
// that code is not linked into this build.
LayoutMeasurer layouts_measurer();

std::string build_id();
// The profile a datacenter's layouts are measured on: its traffic with the ECS share set
// to `ecs_entry_share` (the share of cached entries that are ECS-keyed, from the model),
// at least one ECS subnet, and "other" rdata within one TXT character-string (2..255).
TrafficProfile calibration_profile(const TrafficProfile& traffic, double ecs_entry_share);
// Over the fields the entry generator reads (same text as when it hashed the generator's
// own parameter type, so calibration files measured before stay valid), N and seed.
std::string profile_hash(const TrafficProfile& p, std::uint64_t entries, std::uint64_t seed);

class Calibration {
public:
  // `path` empty: keep results in memory only.
  Calibration(std::string path, LayoutMeasurer measurer, std::uint64_t entries, std::uint64_t seed);
  // Rows for this profile, measuring (and saving) them when not cached.
  const std::vector<LayoutBytes>& rows(const TrafficProfile& p);
  // Measures every profile of `profiles` not cached yet, in parallel (oneTBB; the
  // layouts' allocation counters are per thread), then saves once.
  void measure_missing(const std::vector<TrafficProfile>& profiles);
  const LayoutBytes& layout(const TrafficProfile& p, const std::string& name);
  std::size_t measured() const { return measured_; }
  std::size_t reused() const { return reused_; }
  const std::string& path() const { return path_; }

private:
  void save() const;
  std::string path_;
  LayoutMeasurer measurer_;
  std::uint64_t entries_, seed_;
  std::map<std::string, std::vector<LayoutBytes>> rows_;
  std::size_t measured_ = 0, reused_ = 0;
};

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// The plateau of an ECS-heavy datacenter must not depend on the trace's RNG seed:
// ecs-heavy-fra (configs/datacenters/) at its median rate and
// capacity, 5 seeds, plateau entries within 5% of each other and, where Che's
// approximation says the cache fills, within 5% of Che's entries (= capacity).
//
// Figures: build/tests/fleet/fleet_tests "[plateau]" prints each seed's plateau.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/fleet/cache_curve.hpp"
#include "sim/fleet/che_model.hpp"
#include "sim/fleet/fleet_config.hpp"

using namespace dnsarena::sim::fleet;

TEST_CASE("ECS-heavy datacenter: plateau entries agree across 5 seeds and with Che", "[fleet][plateau]") {
  const FleetConfig fleet = load_fleet(std::string(DNSARENA_CONFIGS_DIR) + "/fleet/example.yaml");
  const auto dc = std::find_if(fleet.datacenters.begin(), fleet.datacenters.end(),
                               [](const Datacenter& d) { return d.name == "ecs-heavy-fra"; });
  REQUIRE(dc != fleet.datacenters.end());
  std::vector<double> plateaus;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CurveRequest req;
    req.traffic = &dc->traffic;
    req.capacity = dc->capacity;
    req.rate_qps = dc->rate_median_qps;
    req.sample_entries = fleet.sample_entries;
    req.max_sample_rate = fleet.max_sample_rate;
    req.max_days = fleet.curve_max_days;
    req.seed = seed;
    const OccupancyCurve c = compute_curve(req);
    const CheEstimate che = che_estimate(dc->traffic, req.rate_qps, req.capacity, seed);
    WARN("seed " << seed << ": plateau " << c.plateau_entries << " entries (unexpired " << c.plateau_unexpired
                 << "), hit rate " << c.plateau_hit_rate << ", minutes " << c.entries.size() << ", head names "
                 << c.head_names << ", sampled capacity " << c.sampled_capacity << ", mean entry bytes "
                 << c.mean_entry_bytes << "; Che " << che.entries << (che.fills ? " (fills)" : "") << ", "
                 << c.run_seconds << " s");
    plateaus.push_back(c.plateau_entries);
    if (che.fills) CHECK(std::abs(c.plateau_entries - che.entries) <= 0.05 * che.entries);
  }
  const auto [lo, hi] = std::minmax_element(plateaus.begin(), plateaus.end());
  CHECK(*hi <= 1.05 * *lo);
}

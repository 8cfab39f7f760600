// SPDX-License-Identifier: GPL-3.0-or-later
// A warm upgrade (the cache migrated across the upgrade's restart) against a
// cold one on the tiny fleet: identical before the rollout, the same after-state, and
// a smaller dip in hit rate and peak in upstream load while it rolls out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "sim/fleet/rollout_sim.hpp"
#include "tests/fleet/fleet_test_dir.hpp"

using namespace dnsarena::sim::fleet;

using dnsarena::test::kFleetTestDir;

namespace {

// Fixed bytes (test data), as in rollout_golden_test.cpp.
LayoutMeasurer warm_upgrade_measurer() {
  return [](const dnsarena::sim::TrafficProfile&, std::uint64_t, std::uint64_t) {
    return std::vector<LayoutBytes>{{"v0", 950, 1100, 1.2}, {"arena", 190, 190}};
  };
}

RolloutResult run(const std::string& plan_file) {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  const RolloutPlan p = load_plan(kFleetTestDir + "/data/" + plan_file, f);
  Calibration cal("", warm_upgrade_measurer(), f.calibration_entries, f.seed);
  return run_rollout(f, p, cal);
}
}  // namespace

TEST_CASE("warm upgrade: less upstream load and a higher hit rate during the rollout than cold", "[fleet][warm]") {
  const RolloutResult cold = run("tiny_plan.yaml");
  const RolloutResult warm = run("tiny_plan_warm.yaml");
  REQUIRE(cold.steps.size() == warm.steps.size());
  for (const RolloutStep& s : cold.steps) {
    if (s.minute >= cold.rollout_start_minute) break;
    const RolloutStep& w = warm.steps[static_cast<std::size_t>(s.minute / cold.step_minutes)];
    CHECK(w.upstream_qps == s.upstream_qps);
    CHECK(w.p99_gb == s.p99_gb);
  }
  // Upstream load above the level before the rollout, summed over the rollout's steps:
  // random restarts (cold either way) add the same to both; upgrades only to cold.
  auto excess_upstream = [](const RolloutResult& r) {
    double before = 0, n = 0, excess = 0;
    for (const RolloutStep& s : r.steps)
      if (s.minute < r.rollout_start_minute) before += s.upstream_qps, ++n;
    before /= n;
    for (const RolloutStep& s : r.steps)
      if (s.minute >= r.rollout_start_minute && s.minute <= r.rollout_end_minute + 1440)
        excess += std::max(0.0, s.upstream_qps - before);
    return excess;
  };
  const double cold_excess = excess_upstream(cold), warm_excess = excess_upstream(warm);
  INFO("peak upstream q/s cold " << cold.peak_upstream_qps << " warm " << warm.peak_upstream_qps);
  INFO("excess upstream (q/s x steps) cold " << cold_excess << " warm " << warm_excess);
  INFO("lowest hit rate cold " << cold.lowest_hit_rate << " warm " << warm.lowest_hit_rate);
  CHECK(warm.peak_upstream_qps < cold.peak_upstream_qps);
  CHECK(warm_excess < 0.6 * cold_excess);
  CHECK(warm.lowest_hit_rate > cold.lowest_hit_rate + 0.02);
  // Both end on the new version's plateau.
  CHECK(std::fabs(warm.p99_after / cold.p99_after - 1) < 0.03);
  CHECK(std::fabs(warm.p50_after / cold.p50_after - 1) < 0.03);
}

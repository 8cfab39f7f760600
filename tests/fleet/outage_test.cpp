// SPDX-License-Identifier: GPL-3.0-or-later
// Serve-stale, prefetch and upstream outages in the fleet model: the curves (real cache),
// the rollout's outage shares, and the plan's `outages:` errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include "common/yaml_reader.hpp"
#include "sim/fleet/cache_curve.hpp"
#include "sim/fleet/rollout_sim.hpp"
#include "tests/fleet/fixed_calibration.hpp"
#include "sim/fleet/tune_sim.hpp"
#include "tests/fleet/fleet_test_dir.hpp"

using namespace dnsarena::sim::fleet;
using dnsarena::test::file_text;
using dnsarena::test::fixed_measurer;
using dnsarena::common::ConfigError;

using dnsarena::test::kFleetTestDir;

namespace {

// 50,000 names, Zipf 0.9, TTLs 60 s and 600 s: a cache of a few thousand entries fills
// and evicts, and most of what it holds expires within a 30-minute outage.
TrafficProfile outage_profile() {
  TrafficProfile t;
  t.names = 50'000;
  t.zipf = 0.9;
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{60, 0.4}, {600, 0.6}});
  return t;
}

CurveRequest outage_request(const TrafficProfile& t, std::uint64_t capacity, std::uint32_t stale_max_age_s) {
  CurveRequest r;
  r.traffic = &t;
  r.capacity = capacity;
  r.rate_qps = 50;
  r.sample_entries = 4096;
  r.max_days = 1;
  r.seed = 3;
  r.stale_max_age_s = stale_max_age_s;
  r.outage_minutes = 30;
  return r;
}

double mean(const std::vector<float>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string outage_plan_error(const std::string& yaml) {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  const std::string path = (std::filesystem::temp_directory_path() / "dnsarena_outage_plan.yaml").string();
  std::ofstream(path) << "from: v0\nto: arena\nstart: 2026-05-03\nend: 2026-05-04\nsim_start: 2026-05-02\n"
                         "sim_end: 2026-05-05\nwaves:\n  - {date: 2026-05-04, share: 1.0}\n"
                      << yaml;
  try {
    load_plan(path, f);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("outage after the plateau: stale answers grow with stale.max_age_s and capacity", "[fleet][outage]") {
  const TrafficProfile t = outage_profile();
  const OccupancyCurve off = compute_curve(outage_request(t, 4'000, 0));
  const OccupancyCurve short_window = compute_curve(outage_request(t, 4'000, 600));
  const OccupancyCurve day = compute_curve(outage_request(t, 4'000, 86'400));
  const OccupancyCurve larger = compute_curve(outage_request(t, 16'000, 86'400));
  for (const OccupancyCurve* c : {&off, &short_window, &day, &larger}) {
    REQUIRE(c->outage_fresh.size() == 30);
    REQUIRE(c->outage_stale.size() == 30);
    CHECK(c->outage_start == c->entries.size());
    for (std::size_t k = 0; k < 30; ++k) CHECK(c->outage_fresh[k] + c->outage_stale[k] <= 1.0001f);
  }
  // Stale off: nothing is answered stale, and fresh answers fade as entries expire
  // (every TTL is at most 10 minutes).
  CHECK(mean(off.outage_stale) == 0);
  CHECK(off.outage_fresh.front() > 0.2);
  CHECK(off.outage_fresh.back() < 0.02);
  // A stale window answers what the arena still holds; a longer window answers more
  // (entries expired more than 10 minutes ago count only with the day-long one), and a
  // larger cache holds more.
  CHECK(mean(short_window.outage_stale) > 0.05);
  CHECK(mean(day.outage_stale) > mean(short_window.outage_stale) + 0.01);
  CHECK(mean(larger.outage_stale) > mean(day.outage_stale) + 0.05);
  // The outage does not change the curve before it: the same run without one.
  CurveRequest plain = outage_request(t, 4'000, 86'400);
  plain.outage_minutes = 0;
  const OccupancyCurve none = compute_curve(plain);
  CHECK(none.outage_fresh.empty());
  CHECK(none.entries == day.entries);
  CHECK(none.hit_rate == day.hit_rate);
  // Deterministic: the same request gives the same shares.
  CHECK(compute_curve(outage_request(t, 4'000, 86'400)).outage_stale == day.outage_stale);
  CHECK(outage_answered_share(larger) > outage_answered_share(day));
}

TEST_CASE("outage inside the curve: no inserts while it lasts, stale answers, then recovery", "[fleet][outage]") {
  const TrafficProfile t = outage_profile();
  CurveRequest r = outage_request(t, 4'000, 86'400);
  r.outage_start_minute = 20;
  r.outage_minutes = 5;
  const OccupancyCurve c = compute_curve(r);
  REQUIRE(c.outage_stale.size() == 5);
  CHECK(c.outage_start == 20);
  // Nothing inserted during the outage; inserts resume after it.
  CHECK(c.inserted[24] == c.inserted[19]);
  CHECK(c.inserted[26] > c.inserted[24]);
  CHECK(mean(c.outage_stale) > 0.01);
  // The curve's hit rate during the outage is its fresh share.
  CHECK(c.hit_rate_raw[20] == Approx(c.outage_fresh[0]).margin(1e-6));
}

TEST_CASE("prefetch: refreshes cost upstream queries and keep popular names from expiring", "[fleet][prefetch]") {
  // 2,000 names all held (no sampling, no head): the misses are expiries, which prefetch
  // turns into refreshes for names asked within the last 20% of their TTL.
  TrafficProfile t = outage_profile();
  t.names = 2'000;
  t.zipf = 1.0;
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{60, 1.0}});
  CurveRequest r = outage_request(t, 4'000, 86'400);
  r.outage_minutes = 0;
  r.rate_qps = 200;
  const OccupancyCurve without = compute_curve(r);
  r.prefetch_percent = 20;
  const OccupancyCurve with = compute_curve(r);
  CHECK(without.prefetch_rate.empty());
  CHECK(without.plateau_prefetch_rate == 0);
  REQUIRE(with.prefetch_rate.size() == with.entries.size());
  CHECK(with.plateau_prefetch_rate > 0.005);
  // Fewer client-visible misses, more upstream queries (misses + refreshes).
  CHECK(with.plateau_hit_rate > without.plateau_hit_rate + 0.02);
  CHECK((1 - with.plateau_hit_rate) + with.plateau_prefetch_rate > 1 - without.plateau_hit_rate);
}

TEST_CASE("plan outages: strict YAML with clear errors", "[fleet][config][outage]") {
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-03T12:00, minutes: 30}\n") == "no error");
  CHECK(outage_plan_error("outages:\n  - {datacenter: nowhere, at: 2026-05-03, minutes: 30}\n").find(
            "outages[0].datacenter': not a datacenter of fleet 'tiny': 'nowhere'") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-03T25:00, minutes: 30}\n").find(
            "outages[0].at': expected a time YYYY-MM-DDTHH:MM") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-13-03, minutes: 30}\n").find("outages[0].at'") !=
        std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-03, minutes: 0}\n").find(
            "outages[0].minutes'") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-04T23:50, minutes: 30}\n").find(
            "must lie within the simulated span") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-03, minutes: 30}\n"
                   "  - {datacenter: small, at: 2026-05-03T00:20, minutes: 5}\n")
            .find("outages[1].at': overlaps another outage of datacenter 'small'") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, at: 2026-05-03, minutes: 30, mins: 3}\n").find(
            "unknown key") != std::string::npos);
  CHECK(outage_plan_error("outages:\n  - {datacenter: small, minutes: 30}\n").find("outages[0].at'") != std::string::npos);
  CHECK(outage_plan_error("outages: {datacenter: small}\n").find("outages") != std::string::npos);
  // Errors name the file and position.
  CHECK(outage_plan_error("outages:\n  - {datacenter: nowhere, at: 2026-05-03, minutes: 30}\n").find(
            "dnsarena_outage_plan.yaml:10:") != std::string::npos);
  CHECK(outage_plan_error("published: {p90_before_gb: 6.5}\n").find("needs both") != std::string::npos);
}

TEST_CASE("datacenter stale and prefetch keys", "[fleet][config][outage]") {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  CHECK(f.datacenters[0].stale_max_age_s == 86'400);
  CHECK(f.datacenters[0].prefetch_percent == 0);
  const std::string path = (std::filesystem::temp_directory_path() / "dnsarena_outage_fleet.yaml").string();
  std::ofstream(path) << "name: t\ndatacenters:\n  - name: a\n    stale: {max_age_s: 3600}\n    prefetch: {percent: 10}\n";
  const FleetConfig g = load_fleet(path);
  CHECK(g.datacenters[0].stale_max_age_s == 3600);
  CHECK(g.datacenters[0].prefetch_percent == 10);
  std::ofstream(path) << "name: t\ndatacenters:\n  - name: a\n    prefetch: {percent: 90}\n";
  CHECK_THROWS_WITH(load_fleet(path), Catch::Contains("prefetch.percent") && Catch::Contains("out of range"));
}

// The tiny fleet's outage plan: a golden CSV as tiny_rollout.csv (regenerate with
// DNSARENA_UPDATE_GOLDEN=1 ./fleet_tests "[golden]"); the outage shares are nonzero and
// grow with the stale window.
TEST_CASE("tiny fleet with outages: stale and failed shares, golden CSV", "[fleet][outage][golden]") {
  FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  const RolloutPlan p = load_plan(kFleetTestDir + "/data/tiny_plan_outage.yaml", f);
  REQUIRE(p.outages.size() == 2);
  auto run = [&](const FleetConfig& fleet) {
    Calibration cal("", fixed_measurer(), fleet.calibration_entries, fleet.seed);
    return run_rollout(fleet, p, cal);
  };
  const RolloutResult r = run(f);
  REQUIRE(r.outages.size() == 2);
  for (const OutageReport& o : r.outages) {
    INFO(o.datacenter);
    CHECK(o.stale_share > 0.05);
    CHECK(o.failed_share > 0);
    CHECK(o.fresh_share + o.stale_share + o.failed_share == Approx(1.0).margin(1e-6));
  }
  CHECK(r.outage_stale_share > 0);
  // The steps in an outage carry the fleet's shares; the others none.
  double in_outage = 0;
  for (const RolloutStep& s : r.steps) {
    const bool small_out = s.minute >= p.outages[0].minute && s.minute < p.outages[0].minute + 30;
    const bool ecs_out = s.minute >= p.outages[1].minute && s.minute < p.outages[1].minute + 120;
    if (small_out || ecs_out) {
      CHECK(s.failed_share > 0);
      in_outage += s.stale_share;
    } else {
      CHECK(s.stale_share == 0);
      CHECK(s.failed_share == 0);
    }
  }
  CHECK(in_outage > 0);
  const std::string path = (std::filesystem::temp_directory_path() / "dnsarena_outage_golden.csv").string();
  write_rollout_csv(r, path);
  const std::string csv = file_text(path);
  CHECK(csv.find(",upstream_qps,stale_share,failed_share\n") != std::string::npos);
  const std::string golden = kFleetTestDir + "/golden/tiny_rollout_outage.csv";
  const char* update = std::getenv("DNSARENA_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden) << csv;
    WARN("golden file rewritten: " << golden);
  }
  REQUIRE(std::filesystem::exists(golden));
  CHECK(csv == file_text(golden));
  // A 10-minute stale window answers less stale than a day's.
  for (Datacenter& d : f.datacenters) d.stale_max_age_s = 600;
  const RolloutResult narrow = run(f);
  CHECK(narrow.outage_stale_share < r.outage_stale_share - 0.01);
}

TEST_CASE("process memory fitted to the published before-state", "[fleet][fit]") {
  FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  RolloutPlan p = load_plan(kFleetTestDir + "/data/tiny_plan.yaml", f);
  RolloutResult r;
  r.p90_before = 0.5 + 2.0, r.p99_before = 0.5 + 3.0;  // cache parts 2 and 3 GB over P0 = 0.5
  r.p90_after = 0.5 + 1.0, r.p99_after = 0.5 + 1.5;
  CHECK_FALSE(fit_process_memory(f, p, r).fitted);
  // Published: P = 1.0, k = 1.5 gives 4.0 and 5.5 before.
  p.published_p90_before_gb = 4.0, p.published_p99_before_gb = 5.5;
  p.published_p90_after_gb = 2.6, p.published_p99_after_gb = 3.4;
  const ProcessMemoryFit fit = fit_process_memory(f, p, r);
  REQUIRE(fit.fitted);
  CHECK(fit.assumed_process_gb == 0.5);
  CHECK(fit.process_gb == Approx(1.0));
  CHECK(fit.cache_scale == Approx(1.5));
  CHECK(fit.p90_after_gb == Approx(2.5));
  CHECK(fit.p99_after_gb == Approx(3.25));
  REQUIRE(fit.after_fitted);
  CHECK(fit.after_cache_scale == Approx(1.6));
  CHECK(fit.after_process_gb == Approx(1.0));
  // Different process_gb per datacenter: no fit (a percentile is not P0 + the cache's).
  f.datacenters[1].process_gb = 0.7;
  const ProcessMemoryFit none = fit_process_memory(f, p, r);
  CHECK_FALSE(none.fitted);
  CHECK(none.why_not.find("process_gb differs") != std::string::npos);
}

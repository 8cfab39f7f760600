// SPDX-License-Identifier: GPL-3.0-or-later
// `sim tune --curves`: the capacity that fits the budget and the hit rate it buys, read
// off hand-made curve files (measured_tune.hpp), checked against values computed here by
// hand; bad files are errors naming the file. `sim rollout --curves`: the datacenters'
// hit rates are the curves' (measured_rollout.hpp).
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/fleet/measured_tune.hpp"
#include "sim/fleet/rollout_sim.hpp"
#include "tests/fleet/fixed_calibration.hpp"
#include "tests/fleet/fleet_test_dir.hpp"

using namespace dnsarena::sim::fleet;

using dnsarena::test::fixed_measurer;
using dnsarena::test::kFleetTestDir;

namespace {

// A curve file as `dnsarena stats --mrc --json` writes it (the fields tune reads, and a
// few it ignores), with hit rates at 1/8x .. 8x.
nlohmann::json curve_doc(const std::vector<double>& hits, double qps, std::uint64_t entries = 10000) {
  const std::vector<double> factors = {0.125, 0.25, 0.5, 1, 2, 4, 8};
  nlohmann::json models = nlohmann::json::array();
  for (std::size_t i = 0; i < factors.size(); ++i)
    models.push_back({{"factor", factors[i]}, {"hit_rate", hits[i]}, {"requests", 1000}, {"sample_rate", 1.0}});
  return {{"sample_rate", 1.0},         {"real_max_entries", entries}, {"real_arena_bytes", 8388608},
          {"real_segment_bytes", 10'000'000}, {"queries_per_s", qps},         {"models", models}};
}

struct TempDir {
  std::string path = "/tmp/dnsarena-mrc-tune-" + std::to_string(::getpid());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
};

}  // namespace

TEST_CASE("sim tune --curves: the capacity that fits and the hit rate read off two hosts' curves", "[fleet][mrc]") {
  const FleetConfig fleet = load_fleet(kFleetTestDir + "/data/mrc_fleet.yaml");
  TempDir dir;
  // east: two hosts, 100 and 300 q/s; west: one host, named by the file's own field.
  const std::string a = dir.write("a.json", curve_doc({0.40, 0.50, 0.60, 0.70, 0.80, 0.88, 0.92}, 100).dump());
  const std::string b = dir.write("b.json", curve_doc({0.44, 0.54, 0.64, 0.74, 0.84, 0.90, 0.94}, 300).dump());
  nlohmann::json w = curve_doc({0.30, 0.40, 0.50, 0.60, 0.70, 0.75, 0.78}, 50);
  w["datacenter"] = "west";
  const std::string c = dir.write("c.json", w.dump());

  const std::vector<DatacenterCurves> curves = group_by_datacenter(load_curve_specs({"east=" + a, "east=" + b, c}), fleet);
  REQUIRE(curves.size() == 2);
  const std::vector<MeasuredTuneRow> rows = tune_from_curves(fleet, curves, 0.1);
  REQUIRE(rows.size() == 2);

  // east: limit 0.05 x 0.9 = 0.045 GB; process 0.01 GB; segment 0.01 GB at 1x:
  // f = (0.045 - 0.01) / 0.01 = 3.5, capacity 35,000, RSS 0.01 + 3.5 x 0.01 = 0.045 GB.
  const MeasuredTuneRow& east = rows[0];
  CHECK(east.datacenter == "east");
  CHECK(east.hosts.size() == 2);
  CHECK(east.current_capacity == 10000);
  CHECK(east.tuned_capacity == 35000);
  CHECK(east.p99_rss_current_gb == Approx(0.02));
  CHECK(east.p99_rss_tuned_gb == Approx(0.045));
  CHECK(east.memory_freed_gb == Approx(-0.025));
  // 3.5x lies between 2x and 4x: t = ln(3.5/2) / ln 2 = 0.80735; host a 0.80 + 0.08 t,
  // host b 0.84 + 0.06 t, weighted 1:3 by their q/s.
  const double t = std::log(1.75) / std::log(2.0);
  const double hit_a = 0.80 + 0.08 * t, hit_b = 0.84 + 0.06 * t;
  const double hit = (100 * hit_a + 300 * hit_b) / 400;
  CHECK(hit == Approx(0.8825).epsilon(1e-4));  // (0.86459 + 3 x 0.88844) / 4
  REQUIRE(east.tuned.in_range);
  CHECK(east.tuned.lo == 2);
  CHECK(east.tuned.hi == 4);
  CHECK(east.tuned.bracket() == "2x..4x");
  CHECK(east.tuned.hit_rate == Approx(hit));
  CHECK(east.current.hit_rate == Approx((100 * 0.70 + 300 * 0.74) / 400));  // at 1x, measured
  CHECK(east.current.bracket() == "at 1x");
  REQUIRE(east.upstream_qps_tuned);
  CHECK(*east.upstream_qps_tuned == Approx(100 * (1 - hit_a) + 300 * (1 - hit_b)));
  CHECK(*east.upstream_qps_current == Approx(100 * 0.30 + 300 * 0.26));
  CHECK(east.note.empty());

  // west: limit 0.18 GB: f = 17, beyond the 8x measured: no hit rate, said so.
  const MeasuredTuneRow& west = rows[1];
  CHECK(west.datacenter == "west");
  CHECK(west.tuned_capacity == 170000);
  CHECK_FALSE(west.tuned.in_range);
  CHECK_FALSE(west.upstream_qps_tuned.has_value());
  CHECK(west.note.find("beyond measured range (0.125x..8x; 0.7800 at 8x)") != std::string::npos);

  // The report: table, CSV and JSON rows carry the same numbers.
  const std::string out = dir.path + "/out";
  std::filesystem::create_directories(out);
  FILE* table = std::tmpfile();
  report_measured_tune(fleet, rows, 0.1, out, table, false);
  std::rewind(table);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), table));
  std::fclose(table);
  INFO(text);
  CHECK(text.find("35000") != std::string::npos);
  CHECK(text.find("2x..4x") != std::string::npos);
  char expected[16];
  std::snprintf(expected, sizeof expected, "%.4f", hit);
  CHECK(text.find(expected) != std::string::npos);
  CHECK(text.find("beyond measured range") != std::string::npos);
  CHECK(std::filesystem::exists(out + "/tune.csv"));
}

TEST_CASE("sim tune --curves: hosts without a query rate, or with none in stats' interval, weigh alike",
          "[fleet][mrc]") {
  const FleetConfig fleet = load_fleet(kFleetTestDir + "/data/mrc_fleet.yaml");
  const std::vector<double> a = {0.40, 0.50, 0.60, 0.70, 0.80, 0.88, 0.92}, b = {0.44, 0.54, 0.64, 0.74, 0.84, 0.90, 0.94};
  for (const bool idle : {true, false}) {
    std::vector<MeasuredCurve> hosts;
    for (const auto* hits : {&a, &b}) {
      nlohmann::json doc = curve_doc(*hits, 0);
      if (!idle) doc["queries_per_s"] = nullptr;  // `stats --mrc --json --interval 0`
      hosts.push_back(parse_measured_curve(doc, "host"));
      hosts.back().datacenter = "east";
    }
    const DatacenterCurves::Reading r = group_by_datacenter(hosts, fleet).front().at(20000);  // 2x
    INFO(idle);
    CHECK(r.curve.hit_rate == Approx(0.82));
    CHECK(r.upstream_qps.has_value() == idle);
    if (idle) CHECK(*r.upstream_qps == 0);
  }
}

TEST_CASE("sim tune --curves: a capacity between two measured factors, and one below the range", "[fleet][mrc]") {
  const std::vector<MeasuredPoint> p = {{0.5, 0.5}, {1, 0.6}, {2, 0.8}};
  CHECK(read_curve(p, 1).hit_rate == Approx(0.6));
  CHECK(read_curve(p, std::sqrt(2.0)).hit_rate == Approx(0.7));  // halfway in log capacity
  CHECK(read_curve(p, std::sqrt(2.0)).bracket() == "1x..2x");
  CHECK_FALSE(read_curve(p, 0.4).in_range);
  CHECK_FALSE(read_curve(p, 2.01).in_range);
  CHECK(read_curve(p, 0.4).bracket() == "beyond measured range (0.5x..2x)");
}

TEST_CASE("sim tune --curves: bad files are errors naming the file", "[fleet][mrc]") {
  const FleetConfig fleet = load_fleet(kFleetTestDir + "/data/mrc_fleet.yaml");
  TempDir dir;
  auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    try {
      load_measured_curve(path);
    } catch (const CurveFileError& e) {
      const std::string what = e.what();
      CHECK(what.find(path) != std::string::npos);
      return what;
    }
    FAIL("no error for " << name);
    return std::string();
  };
  const std::vector<double> hits = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  CHECK(error_of("text.json", "factor,hit_rate\n1,0.5\n").find("not JSON") != std::string::npos);
  nlohmann::json d = curve_doc(hits, 10);
  d.erase("models");
  CHECK(error_of("nomodels.json", d.dump()).find("no \"models\"") != std::string::npos);
  d = curve_doc(hits, 10);
  d["models"][2]["hit_rate"] = "high";
  CHECK(error_of("type.json", d.dump()).find("models[2]: \"hit_rate\" is not a number") != std::string::npos);
  d = curve_doc(hits, 10);
  d["models"][3]["hit_rate"] = 1.5;
  CHECK(error_of("range.json", d.dump()).find("within [0, 1]") != std::string::npos);
  d = curve_doc(hits, 10);
  std::swap(d["models"][0], d["models"][1]);
  CHECK(error_of("order.json", d.dump()).find("not ascending") != std::string::npos);
  d = curve_doc(hits, 10);
  d["models"] = nlohmann::json::array();
  CHECK(error_of("empty.json", d.dump()).find("empty curve") != std::string::npos);
  d = curve_doc(hits, 10);
  for (auto& m : d["models"]) m["requests"] = 0;
  CHECK(error_of("unfed.json", d.dump()).find("empty curve: no request") != std::string::npos);
  CHECK(error_of("array.json", "[1, 2]").find("not a JSON object") != std::string::npos);

  // Another geometry in one datacenter; no datacenter in a fleet of two; an unknown one.
  const std::string one = dir.write("one.json", curve_doc(hits, 10).dump());
  const std::string other = dir.write("other.json", curve_doc(hits, 10, 20000).dump());
  auto group_error = [&](std::vector<std::pair<std::string, std::string>> specs) {
    std::vector<MeasuredCurve> hosts;
    for (auto& [dc, file] : specs) {
      hosts.push_back(load_measured_curve(file));
      hosts.back().datacenter = dc;
    }
    try {
      group_by_datacenter(hosts, fleet);
    } catch (const CurveFileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string geometry = group_error({{"east", one}, {"east", other}});
  CHECK(geometry.find(other + ": another geometry than " + one) != std::string::npos);
  CHECK(geometry.find("20000 entries") != std::string::npos);
  CHECK(group_error({{"east", one}, {"west", other}}) == "no error");  // each datacenter its own
  CHECK(group_error({{"", one}}).find(one + ": no datacenter") != std::string::npos);
  CHECK(group_error({{"north", one}}).find("'north' is not in the fleet") != std::string::npos);
  CHECK(split_datacenter("east=/tmp/x=y.json") == std::pair<std::string, std::string>{"east", "/tmp/x=y.json"});
  CHECK(split_datacenter("/tmp/a=b.json") == std::pair<std::string, std::string>{"", "/tmp/a=b.json"});
}

TEST_CASE("sim rollout --curves: the datacenters' hit rates before and after a capacity change are the curves'",
          "[fleet][mrc]") {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/mrc_fleet.yaml");
  const RolloutPlan plan = load_plan(kFleetTestDir + "/data/mrc_plan.yaml", f);  // capacity x 2 on 3 May
  TempDir dir;
  // Both datacenters measured: 0.25 at 1x and 0.35 at 2x, far from the model's plateaus.
  const std::string east = dir.write("east.json", curve_doc({0.05, 0.10, 0.18, 0.25, 0.35, 0.40, 0.42}, 100).dump());
  const std::string west = dir.write("west.json", curve_doc({0.05, 0.10, 0.18, 0.25, 0.35, 0.40, 0.42}, 100).dump());
  const MeasuredPlateaus measured(f, group_by_datacenter(load_curve_specs({"east=" + east, "west=" + west}), f));
  Calibration cal("", fixed_measurer(), f.calibration_entries, f.seed);
  const RolloutResult model = run_rollout(f, plan, cal);
  const RolloutResult r = run_rollout(f, plan, cal, measured);
  REQUIRE(r.checks.size() == 2);
  for (const DatacenterCheck& c : r.checks) {
    REQUIRE(c.measured_hit_rate);
    CHECK(*c.measured_hit_rate == Approx(0.25));
  }
  // At each step every instance at its plateau (none restarted within a day: the curves
  // are one day long) has the measured hit rate: the fleet's mean is the curves'.
  auto mean_on = [](const RolloutResult& x, int day) {
    double sum = 0;
    int n = 0;
    for (const RolloutStep& s : x.steps)
      if (s.minute >= day * 1440 && s.minute < (day + 1) * 1440) sum += s.mean_hit_rate, ++n;
    return sum / n;
  };
  INFO("model: day 1 " << mean_on(model, 1) << ", day 5 " << mean_on(model, 5));
  CHECK(mean_on(r, 1) == Approx(0.25).margin(0.02));  // before the rollout (2 May): 1x
  CHECK(mean_on(r, 5) == Approx(0.35).margin(0.02));  // after it (6 May): 2x
  CHECK(std::fabs(mean_on(model, 1) - 0.25) > 0.1);   // the model alone says otherwise

  // A capacity the curves do not cover is an error naming the file, before any curve runs.
  RolloutPlan far = plan;
  far.capacity_factor = 16;
  try {
    run_rollout(f, far, cal, measured);
    FAIL("no error for 16x");
  } catch (const CurveFileError& e) {
    CHECK(std::string(e.what()).find(east + " (datacenter east): capacity 160000 is 16x") != std::string::npos);
    CHECK(std::string(e.what()).find("beyond measured range (0.125x..8x)") != std::string::npos);
  }
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Config errors name file:line:column and key; the shipped configs load.
#include <catch2/catch.hpp>

#include <string>

#include "sim/fleet/fleet_config.hpp"
#include "common/yaml_reader.hpp"
#include "tests/fleet/fleet_test_dir.hpp"

using namespace dnsarena::sim::fleet;
using dnsarena::common::ConfigError;

using dnsarena::test::kFleetTestDir;

namespace {
const std::string kConfigs = DNSARENA_CONFIGS_DIR;

std::string fleet_error(const std::string& file) {
  try {
    load_fleet(kFleetTestDir + "/bad/" + file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string plan_error(const std::string& file) {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  try {
    load_plan(kFleetTestDir + "/bad/" + file, f);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("unknown key is rejected with its position", "[fleet][config]") {
  const std::string m = fleet_error("unknown_key.yaml");
  CHECK(m.find("unknown_key.yaml:5:5:") != std::string::npos);
  CHECK(m.find("capasity") != std::string::npos);
  CHECK(m.find("unknown key") != std::string::npos);
}

TEST_CASE("out-of-range value is rejected", "[fleet][config]") {
  const std::string m = fleet_error("out_of_range.yaml");
  CHECK(m.find("out_of_range.yaml:5:13:") != std::string::npos);
  CHECK(m.find("traffic.zipf") != std::string::npos);
  CHECK(m.find("out of range") != std::string::npos);
}

TEST_CASE("wrong type is rejected", "[fleet][config]") {
  const std::string m = fleet_error("wrong_type.yaml");
  CHECK(m.find("wrong_type.yaml:4:16:") != std::string::npos);
  CHECK(m.find("instances") != std::string::npos);
  CHECK(m.find("expected a non-negative integer, got 'many'") != std::string::npos);
}

TEST_CASE("YAML syntax error names the file and position", "[fleet][config]") {
  const std::string m = fleet_error("syntax.yaml");
  CHECK(m.find("syntax.yaml:") != std::string::npos);
  CHECK(m.find("YAML syntax error") != std::string::npos);
}

TEST_CASE("missing required key", "[fleet][config]") {
  const std::string m = fleet_error("missing_key.yaml");
  CHECK(m.find("missing_key.yaml:4:13:") != std::string::npos);
  CHECK(m.find("memory.process_gb") != std::string::npos);
  CHECK(m.find("missing required key") != std::string::npos);
}

TEST_CASE("invalid date in a plan", "[fleet][config]") {
  const std::string m = plan_error("plan_bad_date.yaml");
  CHECK(m.find("plan_bad_date.yaml:4:6:") != std::string::npos);
  CHECK(m.find("not a valid date") != std::string::npos);
}

TEST_CASE("shipped configs load", "[fleet][config]") {
  for (const char* f : {"/fleet/seed.yaml", "/fleet/example.yaml", "/fleet/large.yaml"}) {
    INFO(f);
    const FleetConfig fleet = load_fleet(kConfigs + f);
    CHECK(fleet.total_instances() > 0);
  }
  const FleetConfig seed = load_fleet(kConfigs + "/fleet/seed.yaml");
  const RolloutPlan p = load_plan(kConfigs + "/rollout/seed.yaml", seed);
  CHECK(format_date_days(p.start_day) == "2026-05-18");
  CHECK(format_date_days(p.end_day) == "2026-07-06");
  const FleetConfig example = load_fleet(kConfigs + "/fleet/example.yaml");
  CHECK(example.datacenters.size() >= 5);
}

TEST_CASE("stray queries: parsed, and an impossible share is rejected", "[fleet][config]") {
  const std::string m = fleet_error("stray_share.yaml");
  CHECK(m.find("stray_share.yaml:5:") != std::string::npos);
  CHECK(m.find("share") != std::string::npos);
  CHECK(m.find("out of range") != std::string::npos);
}

TEST_CASE("a plan's upgrade is warm or cold (cold by default), anything else is rejected", "[fleet][config]") {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  CHECK_FALSE(load_plan(kFleetTestDir + "/data/tiny_plan.yaml", f).warm_upgrade);
  CHECK(load_plan(kFleetTestDir + "/data/tiny_plan_warm.yaml", f).warm_upgrade);
  const std::string m = plan_error("plan_bad_upgrade.yaml");
  CHECK(m.find("plan_bad_upgrade.yaml:5:") != std::string::npos);
  CHECK(m.find("expected warm or cold") != std::string::npos);
}

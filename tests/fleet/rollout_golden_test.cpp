// SPDX-License-Identifier: GPL-3.0-or-later
// Golden rollout output for a tiny fleet with a fixed seed; the same seed gives the same CSV.
// Regenerate after a deliberate change: DNSARENA_UPDATE_GOLDEN=1 ./fleet_tests "[golden]"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/fleet/rollout_sim.hpp"
#include "tests/fleet/fixed_calibration.hpp"
#include "tests/fleet/fleet_test_dir.hpp"

using namespace dnsarena::sim::fleet;
using dnsarena::test::file_text;
using dnsarena::test::fixed_measurer;

using dnsarena::test::kFleetTestDir;

namespace {


std::string run_csv(const std::string& name) {
  const FleetConfig f = load_fleet(kFleetTestDir + "/data/tiny_fleet.yaml");
  const RolloutPlan p = load_plan(kFleetTestDir + "/data/tiny_plan.yaml", f);
  Calibration cal("", fixed_measurer(), f.calibration_entries, f.seed);
  const RolloutResult r = run_rollout(f, p, cal);
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  write_rollout_csv(r, path);
  return file_text(path);
}
}  // namespace

TEST_CASE("tiny fleet rollout matches the golden CSV and the same seed gives the same CSV", "[fleet][golden]") {
  const std::string a = run_csv("dnsarena_fleet_golden_a.csv");
  const std::string b = run_csv("dnsarena_fleet_golden_b.csv");
  REQUIRE(a == b);
  const std::string golden = kFleetTestDir + "/golden/tiny_rollout.csv";
  const char* update = std::getenv("DNSARENA_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden) << a;
    WARN("golden file rewritten: " << golden);
  }
  REQUIRE(std::filesystem::exists(golden));
  CHECK(a == file_text(golden));
}

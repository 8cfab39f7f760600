// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim sweep --fleet F --plans P1,P2 [--capacities 0.5x,1x,2x] [--layouts v5,arena]
//                     [--out DIR] [--calibration FILE] [--json]`
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "calibration.hpp"
#include "distributed_run.hpp"
#include "fleet_commands.hpp"
#include "sim/command_options.hpp"
#include "sim/layouts/layout_measure.hpp"
#include "sweep_sim.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct SweepArgs : FleetRunOptions {
  std::string plans, capacities = "1x", layouts;
};

void run(const SweepArgs& a) {
  // With --json, stdout carries the one JSON document alone; the human report goes to stderr.
  FILE* const report = a.json ? stderr : stdout;
  const auto t0 = std::chrono::steady_clock::now();
  const FleetConfig fleet = load_fleet(a.fleet);
  const std::vector<SweepCapacity> capacities = parse_capacities(a.capacities);
  const std::vector<std::string> layouts = split_list(a.layouts);
  const std::vector<std::string> known = layout_names();
  for (const std::string& l : layouts)
    if (std::find(known.begin(), known.end(), l) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("--layouts: unknown layout '" + l + "' (known: " + list + ")");
    }
  std::vector<SweepPlan> plans;
  for (const std::string& p : split_list(a.plans)) {
    if (!std::filesystem::is_regular_file(p)) throw std::invalid_argument("--plans: " + p + ": no such file");
    plans.push_back({std::filesystem::path(p).stem().string(), load_plan(p, fleet)});
  }
  if (plans.empty()) throw std::invalid_argument("--plans: no plan given (e.g. configs/rollout/example.yaml)");
  std::filesystem::create_directories(a.out);
  Calibration cal(a.calibration.empty() ? a.out + "/calibration.json" : a.calibration, layouts_measurer(),
                  fleet.calibration_entries, fleet.seed);

  const SweepResult r = run_sweep(fleet, plans, capacities, layouts, cal);
  const std::string csv = a.out + "/sweep.csv";
  write_sweep_csv(r, csv);
  std::string why;
  const std::string png = a.out + "/sweep.png";
  const bool charted = sweep_chart(r, csv, png, "Sweep, fleet '" + fleet.name + "': p99 RSS peak and hit rate by capacity", &why);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::fprintf(report, "fleet %s: %zu datacenters x %zu capacities x %zu plans x %zu layouts = %zu rollouts\n", fleet.name.c_str(),
              fleet.datacenters.size(), capacities.size(), plans.size(), layouts.empty() ? 1 : layouts.size(),
              r.rows.size());
  std::fprintf(report, "%-14s %-10s %-11s %8s %12s %8s %8s %8s %8s %8s %7s %11s %s\n", "datacenter", "plan", "layouts", "cap",
              "capacity", "budget", "p99pre", "p99peak", "p99post", "peak/bud", "hit", "upstream", "fits");
  for (const SweepRow& w : r.rows)
    std::fprintf(report, "%-14s %-10s %-11s %8s %12llu %8.2f %8.2f %8.2f %8.2f %8.3f %7.4f %11.0f %s\n", w.datacenter.c_str(),
                w.plan.c_str(), (w.layout_from + "->" + w.layout_to).c_str(), w.capacity_label.c_str(),
                static_cast<unsigned long long>(w.capacity), w.budget_gb, w.p99_before_gb, w.p99_peak_gb,
                w.p99_after_gb, w.p99_peak_gb / w.budget_gb, w.hit_rate_after, w.upstream_qps_after,
                w.fits ? "yes" : "NO");
  std::fprintf(report, "(GB per instance; p99 across the datacenter's instances; peak = highest step; hit and upstream "
              "after the rollout)\n");
  std::fprintf(report, "timing: %zu distinct curves; curves %.2f s, fleet steps %.2f s, total %.2f s\n", r.curves_computed,
              r.curves_s, r.fleet_s, elapsed);
  std::fprintf(report, "wrote %s%s\n", csv.c_str(), charted ? (" and " + png).c_str() : "");
  if (!charted) std::fprintf(report, "chart: %s\n", why.c_str());
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const SweepRow& w : r.rows)
      rows.push_back({{"datacenter", w.datacenter}, {"plan", w.plan}, {"layout_from", w.layout_from},
                      {"layout_to", w.layout_to}, {"capacity_label", w.capacity_label}, {"capacity", w.capacity},
                      {"capacity_after", w.capacity_after}, {"instances", w.instances}, {"budget_gb", w.budget_gb},
                      {"p50_before_gb", w.p50_before_gb}, {"p99_before_gb", w.p99_before_gb},
                      {"p99_peak_gb", w.p99_peak_gb}, {"p99_after_gb", w.p99_after_gb},
                      {"hit_rate_after", w.hit_rate_after}, {"upstream_qps_after", w.upstream_qps_after},
                      {"fits", w.fits}});
    std::cout << nlohmann::json{{"rows", rows}, {"curves", r.curves_computed}, {"elapsed_s", elapsed},
                                {"csv", csv}, {"chart", charted ? png : ""}}
                     .dump()
              << std::endl;
  }
}

}  // namespace

void add_sweep_command(CLI::App& sim) {
  auto [c, args] = add_command<SweepArgs>(
      sim, "sweep",
      "A planner's sweep: every datacenter x candidate capacity x layout x rollout plan, one row per\n"
      "combination (that datacenter's p99 RSS before, at its peak and after the rollout against its\n"
      "budget; hit rate and upstream queries after). Writes DIR/sweep.csv and DIR/sweep.png.\n"
      "Under `mpirun -np N` the curve runs and fleet steps are spread over the ranks; the CSV is the same.",
      [](const SweepArgs& a) { run_distributed(a.fleet, [&] { run(a); }); });
  add_fleet_run_options(*c, *args, "sweep-out");
  c->add_option("--plans", args->plans, "Rollout plan YAML files, comma-separated (e.g. configs/rollout/example.yaml)")
      ->required();
  c->add_option("--capacities", args->capacities,
                "Candidate capacities, comma-separated: factors of each datacenter's capacity (0.5x) or "
                "entries (4000000, 750k, 4M)")
      ->capture_default_str();
  c->add_option("--layouts", args->layouts, "Layouts to roll out to, comma-separated (default: each plan's 'to')");
}

}  // namespace dnsarena::sim::fleet

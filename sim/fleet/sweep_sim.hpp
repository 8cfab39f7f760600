// SPDX-License-Identifier: GPL-3.0-or-later
// A planner's sweep: every datacenter x candidate capacity x layout x rollout plan, one
// row per combination (`dnsarena-lab sim sweep`).
//
// Model: each combination is a rollout (rollout_sim.hpp) of ONE datacenter alone (a copy
// of the fleet holding only it, its capacity set to the candidate, the plan's to-layout
// set to the candidate layout), so each row reads that datacenter's own RSS percentiles
// across its instances: p99 before the rollout, at its peak, and after, against the
// datacenter's memory budget, with its hit rate and upstream queries after. A one-
// datacenter fleet has its own instance draws and curve seeds (curve_seed of index 0),
// so its figures differ from that datacenter's share of a whole-fleet run by sampling
// noise only.
//
// Order and cost: datacenter, then capacity, then plan, then layout. Curves depend on
// (datacenter, capacity, rate) only, so the combinations of one datacenter and capacity
// share them (a memo cleared when the capacity changes); each rollout's curve batch goes
// to the runner in use, i.e. to the MPI ranks under mpirun (distributed_run.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

// A candidate capacity: a factor of each datacenter's configured capacity ("0.5x") or
// entries ("4000000", "4M", "750k").
struct SweepCapacity {
  std::string label;
  bool factor = true;
  double value = 1.0;
  std::uint64_t entries_for(std::uint64_t configured) const;
};

// Parses "0.5x,1x,2x,4M"; throws std::invalid_argument naming the bad item.
std::vector<SweepCapacity> parse_capacities(const std::string& list);
// Splits a comma list, dropping empty items.
std::vector<std::string> split_list(const std::string& list);

struct SweepPlan {
  std::string name;  // the file's stem
  RolloutPlan plan;
};

struct SweepRow {
  std::string datacenter, plan, layout_from, layout_to, capacity_label;
  std::uint64_t instances = 0, capacity = 0, capacity_after = 0;
  double budget_gb = 0;
  double p50_before_gb = 0, p99_before_gb = 0, p99_peak_gb = 0, p99_after_gb = 0;
  double hit_rate_after = 0, upstream_qps_after = 0;
  bool fits = false;  // p99 at its peak <= budget
  std::size_t curves = 0;
};

struct SweepResult {
  std::vector<SweepRow> rows;
  std::size_t curves_computed = 0;  // distinct curves (the memo's misses)
  double curves_s = 0, fleet_s = 0;
};

// `layouts` empty: each plan's own to-layout. REQUIRES: plans loaded against `fleet`.
SweepResult run_sweep(const FleetConfig& fleet, const std::vector<SweepPlan>& plans,
                      const std::vector<SweepCapacity>& capacities, const std::vector<std::string>& layouts,
                      Calibration& calibration);

// CSV, one row per combination (header: see sweep_sim.cpp).
void write_sweep_csv(const SweepResult& r, const std::string& path);

// p99 peak / budget against capacity, one line per datacenter, layout and plan; the
// budget line at 1. Returns false (and sets *why) when gnuplot is missing or fails.
bool sweep_chart(const SweepResult& r, const std::string& csv, const std::string& out_png, const std::string& title,
                 std::string* why);

}  // namespace dnsarena::sim::fleet

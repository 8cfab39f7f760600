// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet over time while a layout rolls out: RSS percentiles across instances.
//
// Model: every instance has its own query rate (log-normal around its datacenter's
// median), a restart history (the wave that upgrades it, random restarts as a Poisson
// process, an initial uptime drawn from the same process) and a version (from- or
// to-layout, possibly with a new capacity). At a step, an instance's age since its last
// restart indexes its curve (curve_store.hpp); its RSS is process memory + the cache's
// resident bytes for its layout (memory_model.hpp), its upstream load rate x (1 - hit).
// With `--curves`, a datacenter's hit rates are set from live miss-ratio curves
// (measured_rollout.hpp).
//
// Operations and costs: curves are computed once per (datacenter, capacity, rate
// bucket); each curve is turned into an RSS-by-age table per version, so one
// instance-step is a table lookup. The steps are cut into spans walked independently
// (fleet_walk.hpp: on threads, or over MPI ranks under mpirun); per step the percentiles
// are exact (a rank histogram over the tables' distinct RSS values).
//
// Prefetch: a datacenter with `prefetch: {percent}` has curves that refresh entries near
// their expiry (cache_curve.hpp); its upstream load is misses + refreshes.
//
// Upstream outages (the plan's `outages:`): the datacenter's curves also run an outage as
// long as its longest one after their end, from the plateau (cache_curve.hpp: fresh,
// stale and failed shares per outage minute). At each minute of an outage every instance
// of the datacenter takes those shares at that minute of the outage; an instance younger
// than its curve (restarted lately, still filling) takes them scaled by its hit rate
// against the plateau's (an emptier cache holds less to answer stale). The steps report
// the fleet's share of requests answered stale and failed (CSV columns stale_share and
// failed_share, only when the plan has outages), and each outage its own shares.
// Approximations: the hit rate and upstream columns stay those of a working upstream (the
// clients' view during an outage is the shares), the refill after the outage (stale
// entries refreshed on their next request) is not charged, and an outage shorter than a
// step shows in the steps only if a step's minute falls in it (its own row has it all).
//
// Fitting the process memory outside the cache (`published: {p90_before_gb,
// p99_before_gb}` in the plan): with the same process_gb P0 in every datacenter, a
// percentile of RSS is P0 plus that percentile of the cache's bytes, so the published
// before-state's p90 and p99 give two equations for the process memory P and a scale k
// of the modelled cache bytes: pub = P + k x (predicted - P0). The after-state is then
// P + k x (predicted after - P0): an out-of-sample prediction, printed beside the
// published after-state.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "curve_store.hpp"
#include "fleet_config.hpp"
#include "measured_rollout.hpp"

namespace dnsarena::sim::fleet {

struct RolloutStep {
  std::int64_t minute = 0;  // since the simulation start
  double share_upgraded = 0;
  double p50_gb = 0, p90_gb = 0, p98_gb = 0, p99_gb = 0;
  double fleet_total_gb = 0;
  double mean_hit_rate = 0;  // request-weighted over the fleet
  double upstream_qps = 0;   // misses + prefetch refreshes
  double stale_share = 0, failed_share = 0;  // of the fleet's requests at this step (upstream outages)
};

// One scheduled outage, request-weighted over its datacenter's instances and minutes.
struct OutageReport {
  std::string datacenter;
  std::int64_t minute = 0;  // since the simulation start
  std::uint32_t minutes = 0;
  double requests = 0;  // client queries during the outage
  double fresh_share = 0, stale_share = 0, failed_share = 0;
  std::uint32_t stale_max_age_s = 0;
};

// The before-state fit (see the header comment). fitted: both published before values
// given and one process_gb across the fleet; else `why_not`.
struct ProcessMemoryFit {
  bool fitted = false;
  std::string why_not;
  double assumed_process_gb = 0;  // P0: the fleet file's
  double process_gb = 0;          // P
  double cache_scale = 1;         // k
  double p90_after_gb = 0, p99_after_gb = 0;
  // Diagnosis, when the published after-state is given too: the same two unknowns fitted
  // to the after-state alone (in-sample), to say which of them the after-state disagrees on.
  bool after_fitted = false;
  double after_process_gb = 0, after_cache_scale = 1;
};

struct DatacenterCheck {
  std::string datacenter, layout_before, layout_after;
  std::uint64_t capacity = 0;
  double median_rate = 0;
  double cache_entries = 0, cache_hit_rate = 0;  // real cache plateau (median-rate instance)
  double che_entries = 0, che_hit_rate = 0;      // Che's approximation
  bool che_fills = false, cache_reached_plateau = false;
  double sample_rate = 0;
  double bytes_before = 0, bytes_after = 0;  // resident per entry, from calibration
  double resident_ratio_before = 1, resident_ratio_after = 1;  // heap: measured resident / allocated
  double ecs_entry_share = 0;
  std::optional<double> measured_hit_rate;  // --curves: the live curves' plateau at capacity
};

struct RolloutResult {
  std::vector<RolloutStep> steps;
  std::uint32_t step_minutes = 1;
  std::int64_t sim_start_day = 0;
  std::int64_t rollout_start_minute = 0, rollout_end_minute = 0;
  double p50_before = 0, p50_after = 0, p90_before = 0, p90_after = 0, p98_before = 0, p98_after = 0, p99_before = 0,
         p99_after = 0;
  double peak_upstream_qps = 0;  // most upstream q/s at a step from the rollout start on
  double lowest_hit_rate = 0;    // lowest fleet hit rate at a step from the rollout start on
  std::vector<OutageReport> outages;  // one per scheduled outage, in the plan's order (datacenter, time)
  double outage_stale_share = 0, outage_failed_share = 0;  // over all outages' requests
  ProcessMemoryFit fit;
  std::uint64_t instances = 0;
  std::size_t curves = 0;
  std::uint64_t sampled_requests = 0;
  double cache_seconds = 0;  // summed over threads
  double memory_accesses = 0, segment_bytes = 0;  // curves' random accesses; request-weighted segment size
  double curves_s = 0, fleet_s = 0;          // wall: layouts calibration + curves; fleet steps
  double curves_cpu_s = 0, fleet_cpu_s = 0;  // this process's CPU time (all threads) in each
  std::vector<DatacenterCheck> checks;
};

// `measured`: datacenters whose hit rates come from live curves (measured_rollout.hpp);
// throws CurveFileError when a capacity of the plan is beyond their measured range.
RolloutResult run_rollout(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration,
                          const MeasuredPlateaus& measured = {});

// CSV: time,day,share_upgraded,p50_gb,p90_gb,p98_gb,p99_gb,fleet_total_gb,mean_hit_rate,upstream_qps
// and, when the plan had outages, stale_share,failed_share.
void write_rollout_csv(const RolloutResult& r, const std::string& path);

// The before-state fit from the plateaus of `r` and the plan's published values.
ProcessMemoryFit fit_process_memory(const FleetConfig& fleet, const RolloutPlan& plan, const RolloutResult& r);

}  // namespace dnsarena::sim::fleet

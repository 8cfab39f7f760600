// The fleet over time while a layout rolls out: RSS percentiles across instances.
//
// Model: every instance has its own query rate (log-normal around its datacenter's
// median), a restart history (the wave that upgrades it, random restarts as a Poisson
// process, an initial uptime drawn from the same process) and a version (from- or
// to-layout, possibly with a new capacity). At a step, an instance's age since its last
// restart indexes its curve (curve_store.hpp); its RSS is process memory + the cache's
// resident bytes for its layout (memory_model.hpp), its upstream load rate x (1 - hit).
//
// Operations and costs: curves are computed once per (datacenter, capacity, rate
// bucket); each curve is turned into an RSS-by-age table per version, so one
// instance-step is a table lookup. The steps are cut into spans walked independently
// (fleet_walk.hpp: on threads, or over MPI ranks under mpirun); per step the percentiles
// are exact (a rank histogram over the tables' distinct RSS values).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "curve_store.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct RolloutStep {
  std::int64_t minute = 0;  // since the simulation start
  double share_upgraded = 0;
  double p50_gb = 0, p90_gb = 0, p98_gb = 0, p99_gb = 0;
  double fleet_total_gb = 0;
  double mean_hit_rate = 0;  // request-weighted over the fleet
  double upstream_qps = 0;
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
  std::uint64_t instances = 0;
  std::size_t curves = 0;
  std::uint64_t sampled_requests = 0;
  double cache_seconds = 0;  // summed over threads
  double memory_accesses = 0, segment_bytes = 0;  // curves' random accesses; request-weighted segment size
  double curves_s = 0, fleet_s = 0;          // wall: layouts calibration + curves; fleet steps
  double curves_cpu_s = 0, fleet_cpu_s = 0;  // this process's CPU time (all threads) in each
  std::vector<DatacenterCheck> checks;
};

RolloutResult run_rollout(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration);

// CSV: time,day,share_upgraded,p50_gb,p90_gb,p98_gb,p99_gb,fleet_total_gb,mean_hit_rate,upstream_qps
void write_rollout_csv(const RolloutResult& r, const std::string& path);

}  // namespace dnsarena::sim::fleet

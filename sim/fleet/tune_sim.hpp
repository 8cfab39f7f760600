// Capacity tuning per datacenter: the largest capacity whose p99 RSS fits the budget.
//
// Model: a datacenter's p99 RSS is the RSS of its instance at the 99th percentile of
// query rate (occupancy and inserts grow with rate), at the peak of its cold-start curve
// (real cache, curve_store.hpp) under the layout's memory model. The largest capacity
// with p99 <= budget x (1 - headroom) is found by bisection in log(capacity) between
// capacity/8 and capacity x 8 (8 steps, ~3% resolution). Hit rate and upstream queries
// are request-weighted over the datacenter's instances (rate buckets, plateau values).
//
// The "reinvest" case repeats the search with the to-layout's bytes per entry: what the
// same budget buys after a layout change.
#pragma once
#include <string>
#include <vector>

#include "calibration.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct TuneRow {
  std::string datacenter, layout;
  std::uint64_t current_capacity = 0, tuned_capacity = 0;
  double budget_gb = 0, limit_gb = 0;
  double p99_rss_current_gb = 0, p99_rss_tuned_gb = 0;
  double hit_rate_current = 0, hit_rate_tuned = 0;
  double upstream_qps_current = 0, upstream_qps_tuned = 0;
  double memory_freed_gb = 0;  // per instance at p99: current - tuned (negative = needed)
  std::string note;            // "capped at 8x", "does not fit even at capacity/8"
};

struct TuneCurvePoint {
  std::string datacenter;
  std::uint64_t capacity = 0;
  double hit_rate = 0, upstream_qps = 0;
};

struct TuneResult {
  std::vector<TuneRow> rows;            // per datacenter, current layout (then after-layout rows)
  std::vector<TuneCurvePoint> curve;    // hit rate against capacity, per datacenter
  double elapsed_s = 0;
};

TuneResult run_tune(const FleetConfig& fleet, Calibration& cal, double headroom, const std::string& layout,
                    const std::string& layout_after);

}  // namespace dnsarena::sim::fleet

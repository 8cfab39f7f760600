// SPDX-License-Identifier: GPL-3.0-or-later
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
//
// Outage goal (`sim tune --outage-minutes M --outage-answered G`): per datacenter, the
// smallest capacity at which its median-rate instance, at its plateau, answers at least
// a share G of the requests asked during an upstream outage of M minutes (fresh or stale:
// cache_curve.hpp's outage, with the datacenter's stale.max_age_s and prefetch), found by
// bisection in log(capacity) between capacity/8 and capacity x 8 (8 steps), with the p99
// RSS it costs and whether that fits the budget. A share of the requests can never be
// answered: names first asked during the outage (and, with a small stale window, names
// expired longer ago); then the goal is reported as not reachable, with the best share.
#pragma once
#include <string>
#include <vector>

#include "cache_curve.hpp"
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
  // The outage goal (OutageGoal; first layout's rows only): answered shares at the current
  // and the goal's capacity, the goal's capacity (0: not reachable within 8x) and its p99 RSS.
  bool outage = false;
  double outage_answered_current = 0, outage_answered_goal = 0;
  std::uint64_t outage_capacity = 0;
  double outage_p99_rss_gb = 0;
  bool outage_fits_budget = false;
  std::string outage_note;
};

// Capacity for answering `answered` of the requests during an outage of `minutes`; off
// when minutes is 0.
struct OutageGoal {
  std::uint32_t minutes = 0;
  double answered = 0.99;
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
                    const std::string& layout_after, const OutageGoal& goal = {});

// The share of requests answered (fresh or stale) over a curve's outage.
double outage_answered_share(const OccupancyCurve& c);

}  // namespace dnsarena::sim::fleet

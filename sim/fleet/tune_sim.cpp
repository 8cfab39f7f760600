// SPDX-License-Identifier: GPL-3.0-or-later
#include "tune_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "che_model.hpp"
#include "curve_store.hpp"
#include "memory_model.hpp"

namespace dnsarena::sim::fleet {

namespace {

constexpr double kZ99 = 2.3263478740408408;  // standard normal 99th percentile

double peak_rss(const Datacenter& dc, const LayoutMemory& m, std::uint64_t cap, const OccupancyCurve& c) {
  double peak = 0;
  for (std::size_t age = 0; age < c.entries.size(); ++age)
    peak = std::max(peak, cache_resident_bytes(m, double(cap), c.entries[age], c.inserted[age]));
  return dc.process_gb * kGB + peak;
}

// Request-weighted plateau hit rate and upstream queries over the datacenter's instances.
void fleet_hits(const FleetConfig& fleet, std::size_t d, std::uint64_t cap, CurveStore& store, double* hit,
                double* upstream) {
  const Datacenter& dc = fleet.datacenters[d];
  // Instances' rates: log-normal quantiles (midpoints), deterministic.
  std::vector<double> rates;
  for (std::uint32_t i = 0; i < dc.instances; ++i) {
    const double q = (i + 0.5) / dc.instances;
    // Acklam-free: inverse normal by bisection on erfc (accurate enough for weights).
    double lo = -8, hi = 8;
    for (int k = 0; k < 60; ++k) {
      const double mid = 0.5 * (lo + hi);
      (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
    }
    rates.push_back(dc.rate_median_qps * std::exp(dc.rate_spread * 0.5 * (lo + hi)));
  }
  std::vector<CurveKey> keys;
  for (double r : rates) keys.push_back({d, cap, rate_bucket(dc.rate_median_qps, r)});
  store.compute(keys);
  double h = 0, total = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    h += rates[i] * store.get(keys[i]).plateau_hit_rate;
    total += rates[i];
  }
  *hit = total > 0 ? h / total : 0;
  *upstream = total - h;
}

// The outage goal's search for datacenter d (tune_sim.hpp).
void size_for_outage(const FleetConfig& fleet, std::size_t d, const CurveStore& store, const LayoutMemory& mem,
                     double p99_rate, const OutageGoal& goal, TuneRow& row) {
  const Datacenter& dc = fleet.datacenters[d];
  auto answered_at = [&](std::uint64_t cap) {
    return outage_answered_share(store.compute_at(d, cap, dc.rate_median_qps, goal.minutes));
  };
  auto cap_of = [](double l) { return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::exp(l))); };
  row.outage = true;
  row.outage_answered_current = answered_at(dc.capacity);
  double lo = std::log(dc.capacity / 8.0), hi = std::log(dc.capacity * 8.0);
  const double best = answered_at(cap_of(hi));
  if (best < goal.answered) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "not reachable within 8x the capacity: %.4f answered there", best);
    row.outage_note = buf;
    row.outage_answered_goal = best;
    return;
  }
  if (answered_at(cap_of(lo)) >= goal.answered) {
    hi = lo;
    row.outage_note = "met at capacity/8";
  } else {
    for (int i = 0; i < 8; ++i) {
      const double mid = 0.5 * (lo + hi);
      (answered_at(cap_of(mid)) >= goal.answered ? hi : lo) = mid;
    }
  }
  // Round up to 3 significant digits (the goal is a floor).
  std::uint64_t cap = cap_of(hi);
  const double mag = std::pow(10.0, std::floor(std::log10(static_cast<double>(cap))) - 2);
  cap = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(cap / mag) * mag));
  row.outage_capacity = cap;
  row.outage_answered_goal = answered_at(cap);
  row.outage_p99_rss_gb = peak_rss(dc, mem, cap, store.compute_at(d, cap, p99_rate, 0)) / kGB;
  row.outage_fits_budget = row.outage_p99_rss_gb <= row.limit_gb;
}

}  // namespace

double outage_answered_share(const OccupancyCurve& c) {
  double sum = 0;
  for (std::size_t k = 0; k < c.outage_fresh.size(); ++k) sum += c.outage_fresh[k] + c.outage_stale[k];
  return c.outage_fresh.empty() ? 0.0 : sum / static_cast<double>(c.outage_fresh.size());
}

TuneResult run_tune(const FleetConfig& fleet, Calibration& cal, double headroom, const std::string& layout,
                    const std::string& layout_after, const OutageGoal& goal) {
  const auto t0 = std::chrono::steady_clock::now();
  TuneResult res;
  CurveStore store(fleet);
  std::vector<std::string> layouts{layout};
  if (!layout_after.empty() && layout_after != layout) layouts.push_back(layout_after);
  // Hit rate against capacity (median-rate instance), for the chart.
  {
    std::vector<CurveKey> grid;
    for (std::size_t d = 0; d < fleet.datacenters.size(); ++d)
      for (int k = -3; k <= 3; ++k)
        grid.push_back({d, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(fleet.datacenters[d].capacity * std::exp2(k))), 0});
    store.compute(grid);
    for (const auto& g : grid) {
      const auto& c = store.get(g);
      const Datacenter& dc = fleet.datacenters[g.dc];
      res.curve.push_back({dc.name, g.capacity, c.plateau_hit_rate, dc.rate_median_qps * (1 - c.plateau_hit_rate)});
    }
  }
  {
    std::vector<TrafficProfile> mixes;
    for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) {
      const Datacenter& dc = fleet.datacenters[d];
      const CheEstimate che = che_estimate(dc.traffic, dc.rate_median_qps, dc.capacity, curve_seed(fleet, d));
      mixes.push_back(calibration_profile(dc.traffic, che.ecs_entry_share));
    }
    cal.measure_missing(mixes);  // in parallel, before the rows below read them
  }
  for (const std::string& lay : layouts) {
    for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) {
      const Datacenter& dc = fleet.datacenters[d];
      const CheEstimate che = che_estimate(dc.traffic, dc.rate_median_qps, dc.capacity, curve_seed(fleet, d));
      const LayoutBytes& lb = cal.layout(calibration_profile(dc.traffic, che.ecs_entry_share), lay);
      const LayoutMemory mem = layout_memory(lb.layout, lb.net_bytes, lb.alloc_bytes, lb.resident_ratio);
      const double p99_rate = dc.rate_median_qps * std::exp(dc.rate_spread * kZ99);
      TuneRow row;
      row.datacenter = dc.name;
      row.layout = lay;
      row.current_capacity = dc.capacity;
      row.budget_gb = dc.memory_budget_gb;
      row.limit_gb = dc.memory_budget_gb * (1 - headroom);
      auto p99_at = [&](std::uint64_t cap) { return peak_rss(dc, mem, cap, store.compute_at(d, cap, p99_rate)) / kGB; };
      row.p99_rss_current_gb = p99_at(dc.capacity);
      double lo = std::log(dc.capacity / 8.0), hi = std::log(dc.capacity * 8.0);
      auto cap_of = [](double l) { return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::exp(l))); };
      if (p99_at(cap_of(hi)) <= row.limit_gb) {
        lo = hi;
        row.note = "capped at 8x the current capacity";
      } else if (p99_at(cap_of(lo)) > row.limit_gb) {
        row.note = "does not fit even at capacity/8";
      } else {
        for (int i = 0; i < 8; ++i) {
          const double mid = 0.5 * (lo + hi);
          (p99_at(cap_of(mid)) <= row.limit_gb ? lo : hi) = mid;
        }
      }
      // Round down to 3 significant digits (an operator's number).
      std::uint64_t cap = cap_of(lo);
      const double mag = std::pow(10.0, std::floor(std::log10(static_cast<double>(cap))) - 2);
      cap = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::floor(cap / mag) * mag));
      row.tuned_capacity = cap;
      row.p99_rss_tuned_gb = p99_at(cap);
      fleet_hits(fleet, d, dc.capacity, store, &row.hit_rate_current, &row.upstream_qps_current);
      fleet_hits(fleet, d, cap, store, &row.hit_rate_tuned, &row.upstream_qps_tuned);
      row.memory_freed_gb = row.p99_rss_current_gb - row.p99_rss_tuned_gb;
      if (goal.minutes > 0 && lay == layouts.front()) size_for_outage(fleet, d, store, mem, p99_rate, goal, row);
      res.rows.push_back(row);
    }
  }
  res.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
#include "rollout_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "che_model.hpp"
#include "memory_model.hpp"
#include "fleet_walk.hpp"
#include "sampled_trace.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct Event {
  std::int64_t minute;  // since sim start; may be negative (initial uptime)
  std::uint8_t version; // 0 from, 1 to
  bool warm = false;    // a warm upgrade: the new version starts with the cache migrated
  std::uint32_t start_age = 0;  // age (steps) on the new curve at the event: 0 cold, else where it holds what was migrated
};

struct Instance {
  std::uint32_t dc = 0;
  double rate = 0;
  std::uint32_t table[2] = {0, 0};  // RSS table per version
  std::vector<Event> events;        // sorted by minute
};

// RSS (bytes), hit rate by age in steps, for one curve under one layout; past the end: last value
// (the walk takes them as rows: fleet_walk.hpp).
struct AgeTable {
  std::vector<float> rss, hit, entries, prefetch;
  std::vector<float> outage_fresh, outage_stale;  // the curve's outage after its end (per outage minute)
  std::vector<std::uint32_t> rss_index;  // each rss value's index in the fleet's sorted distinct RSS values
  std::size_t last(std::int64_t age) const { return std::min<std::size_t>(static_cast<std::size_t>(age), rss.size() - 1); }
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double unit(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Standard normal from two uniforms (Box-Muller).
double normal(std::uint64_t h) {
  const double u1 = 1.0 - unit(mix64(h ^ 1)), u2 = unit(mix64(h ^ 2));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

double mean_over(const std::vector<RolloutStep>& s, std::int64_t from, std::int64_t to, double RolloutStep::*f) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& st : s)
    if (st.minute >= from && st.minute < to) sum += st.*f, ++n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

}  // namespace

namespace {

// Per datacenter: the layouts' bytes per entry on its own mix, capacities before and
// after the upgrade, and Che's estimate at the median rate.
struct DatacenterSizing {
  std::vector<LayoutMemory> memory_before, memory_after;
  std::vector<std::uint64_t> capacity_before, capacity_after;
  std::vector<CheEstimate> che;
};

DatacenterSizing size_datacenters(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration) {
  const std::size_t count = fleet.datacenters.size();
  DatacenterSizing sizing;
  sizing.memory_before.resize(count);
  sizing.memory_after.resize(count);
  sizing.capacity_before.resize(count);
  sizing.capacity_after.resize(count);
  sizing.che.resize(count);
  std::vector<TrafficProfile> mixes;
  for (std::size_t d = 0; d < count; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    sizing.che[d] = che_estimate(dc.traffic, dc.rate_median_qps, dc.capacity, curve_seed(fleet, d));
    mixes.push_back(calibration_profile(dc.traffic, sizing.che[d].ecs_entry_share));
  }
  calibration.measure_missing(mixes);
  for (std::size_t d = 0; d < count; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    const LayoutBytes& before = calibration.layout(mixes[d], plan.from);
    const LayoutBytes& after = calibration.layout(mixes[d], plan.to);
    sizing.memory_before[d] = layout_memory(before.layout, before.net_bytes, before.alloc_bytes, before.resident_ratio);
    sizing.memory_after[d] = layout_memory(after.layout, after.net_bytes, after.alloc_bytes, after.resident_ratio);
    sizing.capacity_before[d] = dc.capacity;
    double factor = 1.0;
    if (plan.capacity_change == "reinvest")
      factor = sizing.memory_before[d].bytes_per_entry / sizing.memory_after[d].bytes_per_entry;
    else if (plan.capacity_change == "factor")
      factor = plan.capacity_factor;
    sizing.capacity_after[d] = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(dc.capacity * factor)));
  }
  return sizing;
}

// One instance: its rate, and its restarts and upgrade as events. Deterministic in
// (fleet seed, global index).
Instance place_instance(const FleetConfig& fleet, const RolloutPlan& plan, std::size_t dc_index, std::size_t global_index,
                        std::int64_t total_minutes) {
  const Datacenter& dc = fleet.datacenters[dc_index];
  const std::uint64_t h = mix64(fleet.seed * 0x9E3779B97F4A7C15ULL + global_index * 0xD1B54A32D192ED03ULL + 17);
  Instance in;
  in.dc = static_cast<std::uint32_t>(dc_index);
  in.rate = dc.rate_median_qps * std::exp(dc.rate_spread * normal(h));
  SplitMix64 rng(h);
  const double per_minute = dc.restarts_per_day / 1440.0;
  // Initial uptime: memoryless restart process (no restarts: up since long ago).
  const std::int64_t last = per_minute > 0 ? -static_cast<std::int64_t>(std::ceil(-std::log(1.0 - rng.unit()) / per_minute))
                                           : -(std::int64_t{1} << 40);
  in.events.push_back({last, 0});
  // Upgrade wave.
  const double wave_draw = rng.unit(), spread_draw = rng.unit();
  std::int64_t upgrade = -1;
  for (const auto& w : plan.waves) {
    const bool named = std::find(w.datacenters.begin(), w.datacenters.end(), dc.name) != w.datacenters.end();
    if (named || wave_draw < w.share) {
      upgrade = (w.day - plan.sim_start_day) * 1440 + static_cast<std::int64_t>(spread_draw * plan.wave_spread_hours * 60);
      break;
    }
  }
  // Random restarts over the simulated span.
  std::vector<std::int64_t> restarts;
  if (per_minute > 0)
    for (double at = -std::log(1.0 - rng.unit()) / per_minute; at < total_minutes; at += -std::log(1.0 - rng.unit()) / per_minute)
      restarts.push_back(static_cast<std::int64_t>(at));
  for (std::int64_t r : restarts)
    if (upgrade < 0 || r < upgrade) in.events.push_back({r, 0});
  if (upgrade >= 0 && upgrade <= total_minutes) {
    in.events.push_back({upgrade, 1, plan.warm_upgrade});
    for (std::int64_t r : restarts)
      if (r > upgrade) in.events.push_back({r, 1});
  }
  std::sort(in.events.begin(), in.events.end(), [](const Event& a, const Event& b) { return a.minute < b.minute; });
  return in;
}

std::vector<Instance> place_instances(const FleetConfig& fleet, const RolloutPlan& plan, std::int64_t total_minutes) {
  std::vector<Instance> instances;
  instances.reserve(fleet.total_instances());
  for (std::size_t d = 0; d < fleet.datacenters.size(); ++d)
    for (std::uint32_t i = 0; i < fleet.datacenters[d].instances; ++i)
      instances.push_back(place_instance(fleet, plan, d, instances.size(), total_minutes));
  return instances;
}

// Curves, once per (dc, capacity, rate bucket), in parallel; plus each datacenter's
// curve at the median rate (its check row).
void compute_curves(CurveStore& store, const FleetConfig& fleet, const std::vector<Instance>& instances,
                    const DatacenterSizing& sizing) {
  std::vector<CurveKey> keys;
  for (const auto& in : instances) {
    const int bucket = rate_bucket(fleet.datacenters[in.dc].rate_median_qps, in.rate);
    keys.push_back({in.dc, sizing.capacity_before[in.dc], bucket});
    keys.push_back({in.dc, sizing.capacity_after[in.dc], bucket});
  }
  for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) keys.push_back({d, sizing.capacity_before[d], 0});
  store.compute(keys);
}

// RSS-by-age tables per (curve, version), in steps; each instance gets its two tables,
// and every table the index of its RSS values among the fleet's sorted distinct values.
class AgeTables {
public:
  AgeTables(const FleetConfig& fleet, const CurveStore& store, const DatacenterSizing& sizing, std::int64_t step,
            const MeasuredPlateaus& measured)
      : fleet_(fleet), store_(store), sizing_(sizing), step_(step), measured_(measured) {}

  void assign(std::vector<Instance>& instances) {
    for (auto& in : instances) {
      const int bucket = rate_bucket(fleet_.datacenters[in.dc].rate_median_qps, in.rate);
      in.table[0] = table_for({in.dc, sizing_.capacity_before[in.dc], bucket}, 0);
      in.table[1] = table_for({in.dc, sizing_.capacity_after[in.dc], bucket}, 1);
    }
  }

  // The distinct RSS values of all tables, sorted; they index an exact rank histogram.
  std::vector<float> index_values() {
    std::vector<float> distinct;
    for (const AgeTable& t : tables_) distinct.insert(distinct.end(), t.rss.begin(), t.rss.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (AgeTable& t : tables_) {
      t.rss_index.resize(t.rss.size());
      for (std::size_t age = 0; age < t.rss.size(); ++age)
        t.rss_index[age] =
            static_cast<std::uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), t.rss[age]) - distinct.begin());
    }
    return distinct;
  }

  const std::vector<AgeTable>& tables() const { return tables_; }

private:
  std::uint32_t table_for(const CurveKey& key, int version) {
    auto [it, fresh] = index_.try_emplace({key, version}, static_cast<std::uint32_t>(tables_.size()));
    if (!fresh) return it->second;
    const OccupancyCurve& curve = store_.get(key);
    const Datacenter& dc = fleet_.datacenters[key.dc];
    const LayoutMemory& memory = version ? sizing_.memory_after[key.dc] : sizing_.memory_before[key.dc];
    AgeTable t;
    const std::size_t count = curve.entries.size() / static_cast<std::size_t>(step_) + 2;
    for (std::size_t s = 0; s < count; ++s) {
      const std::size_t age = s * static_cast<std::size_t>(step_);
      t.rss.push_back(static_cast<float>(dc.process_gb * kGB + cache_resident_bytes(memory, static_cast<double>(key.capacity),
                                                                                     curve.entries_at(age),
                                                                                     curve.inserted_at(age))));
      t.hit.push_back(static_cast<float>(measured_.hit_rate_at(key.dc, key.capacity, curve, age)));
      t.entries.push_back(static_cast<float>(curve.entries_at(age)));
      t.prefetch.push_back(static_cast<float>(curve.prefetch_rate_at(age)));
    }
    t.outage_fresh = curve.outage_fresh;
    t.outage_stale = curve.outage_stale;
    tables_.push_back(std::move(t));
    return it->second;
  }

  const FleetConfig& fleet_;
  const CurveStore& store_;
  const DatacenterSizing& sizing_;
  std::int64_t step_;
  const MeasuredPlateaus& measured_;
  std::map<std::tuple<CurveKey, int>, std::uint32_t> index_;
  std::vector<AgeTable> tables_;
};

// A warm upgrade keeps the entries the instance held (its age on the old version's curve
// at the upgrade), less what the new capacity cannot hold (the new curve's most entries):
// it starts on the new version's curve at the first age holding that many, and so with
// that age's hit rate and RSS. NOTE: a curve is a cold start; a migrated cache holds
// the same number of entries but older ones (nearer expiry), so this is optimistic
// about the hours right after the upgrade.
void resolve_warm_upgrades(std::vector<Instance>& instances, const std::vector<AgeTable>& tables, std::int64_t step) {
  for (Instance& in : instances)
    for (std::size_t e = 1; e < in.events.size(); ++e) {
      Event& ev = in.events[e];
      if (!ev.warm) continue;
      const Event& before = in.events[e - 1];
      const AgeTable& old_table = tables[in.table[before.version]];
      const AgeTable& new_table = tables[in.table[ev.version]];
      const double held = old_table.entries[old_table.last((ev.minute - before.minute) / step + before.start_age)];
      const float most = *std::max_element(new_table.entries.begin(), new_table.entries.end());
      const float target = std::min(static_cast<float>(held), most);
      const auto at = std::find_if(new_table.entries.begin(), new_table.entries.end(), [&](float x) { return x >= target; });
      ev.start_age = static_cast<std::uint32_t>(at - new_table.entries.begin());
    }
}

// The walk's input: the tables as rows (RSS index, RSS, hit rate), the instances' rates
// and events with each event's table resolved from its version.
FleetWalk make_walk(const std::vector<Instance>& instances, const std::vector<AgeTable>& tables, std::vector<float> distinct,
                    std::int64_t step, std::int64_t steps) {
  FleetWalk w;
  w.step_minutes = step;
  w.steps = steps;
  w.distinct = std::move(distinct);
  for (const AgeTable& t : tables) {
    w.table_start.push_back(w.rows.size());
    for (std::size_t age = 0; age < t.rss.size(); ++age)
      w.rows.push_back({t.rss_index[age], t.rss[age], t.hit[age], t.prefetch[age]});
  }
  w.table_start.push_back(w.rows.size());
  w.rate.reserve(instances.size());
  w.event_start.reserve(instances.size() + 1);
  for (const Instance& in : instances) {
    w.rate.push_back(in.rate);
    w.event_start.push_back(w.events.size());
    for (const Event& ev : in.events) w.events.push_back({ev.minute, in.table[ev.version], ev.start_age, ev.version});
  }
  w.event_start.push_back(w.events.size());
  return w;
}

// Plateaus: before = mean over the span before the rollout; after = mean over the last
// 7 days (or the whole span after the rollout end if shorter).
void summarize_plateaus(RolloutResult& res, std::int64_t total_minutes) {
  const std::int64_t after_from = std::max(res.rollout_end_minute, total_minutes - 7 * 1440);
  res.p50_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p50_gb);
  res.p90_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p90_gb);
  res.p98_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p98_gb);
  res.p99_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p99_gb);
  res.p50_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p50_gb);
  res.p90_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p90_gb);
  res.p98_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p98_gb);
  res.p99_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p99_gb);
  res.lowest_hit_rate = 1.0;
  for (const auto& st : res.steps)
    if (st.minute >= res.rollout_start_minute) {
      res.peak_upstream_qps = std::max(res.peak_upstream_qps, st.upstream_qps);
      res.lowest_hit_rate = std::min(res.lowest_hit_rate, st.mean_hit_rate);
    }
}

// The outages (rollout_sim.hpp): per outage minute, every instance of the datacenter at
// its age then, request-weighted; the steps whose minute falls in an outage get the
// fleet's shares.
void apply_outages(RolloutResult& res, const FleetConfig& fleet, const RolloutPlan& plan,
                   const std::vector<Instance>& instances, const std::vector<AgeTable>& tables, std::int64_t step) {
  if (plan.outages.empty()) return;
  double fleet_rate = 0;
  for (const Instance& in : instances) fleet_rate += in.rate;
  double all_requests = 0, all_stale = 0, all_failed = 0;
  for (const Outage& o : plan.outages) {
    OutageReport rep;
    rep.datacenter = o.datacenter;
    rep.minute = o.minute;
    rep.minutes = o.minutes;
    rep.stale_max_age_s = fleet.datacenters[o.dc].stale_max_age_s;
    double fresh = 0, stale = 0, failed = 0;
    for (std::uint32_t x = 0; x < o.minutes; ++x) {
      const std::int64_t minute = o.minute + x;
      double minute_stale = 0, minute_failed = 0;
      for (const Instance& in : instances) {
        if (in.dc != o.dc) continue;
        // Its latest event at or before the minute (the first is at a negative minute).
        const auto next = std::upper_bound(in.events.begin(), in.events.end(), minute,
                                           [](std::int64_t m, const Event& e) { return m < e.minute; });
        const Event& ev = *(next - 1);
        const AgeTable& t = tables[in.table[ev.version]];
        if (t.outage_fresh.empty()) throw std::logic_error("outage of a datacenter whose curves ran none");
        const std::size_t age = t.last((minute - ev.minute) / step + ev.start_age);
        const float plateau_hit = t.hit.back();
        const double scale =
            age + 1 < t.hit.size() && plateau_hit > 0 ? std::clamp(t.hit[age] / plateau_hit, 0.0f, 1.0f) : 1.0;
        const std::size_t k = std::min<std::size_t>(x, t.outage_fresh.size() - 1);
        const double f = scale * t.outage_fresh[k], s = scale * t.outage_stale[k];
        rep.requests += in.rate * 60;
        fresh += in.rate * 60 * f;
        minute_stale += in.rate * s;
        minute_failed += in.rate * std::max(0.0, 1.0 - f - s);
      }
      stale += minute_stale * 60;
      failed += minute_failed * 60;
      if (minute % step == 0 && minute / step < static_cast<std::int64_t>(res.steps.size())) {
        RolloutStep& st = res.steps[static_cast<std::size_t>(minute / step)];
        st.stale_share += minute_stale / fleet_rate;
        st.failed_share += minute_failed / fleet_rate;
      }
    }
    if (rep.requests > 0) {
      rep.fresh_share = fresh / rep.requests;
      rep.stale_share = stale / rep.requests;
      rep.failed_share = failed / rep.requests;
    }
    all_requests += rep.requests;
    all_stale += stale;
    all_failed += failed;
    res.outages.push_back(rep);
  }
  res.outage_stale_share = all_requests > 0 ? all_stale / all_requests : 0;
  res.outage_failed_share = all_requests > 0 ? all_failed / all_requests : 0;
}

// Each datacenter's curve at the median rate beside Che's estimate.
std::vector<DatacenterCheck> datacenter_checks(const FleetConfig& fleet, const RolloutPlan& plan, const CurveStore& store,
                                               const DatacenterSizing& sizing, const MeasuredPlateaus& measured) {
  std::vector<DatacenterCheck> checks;
  for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    const OccupancyCurve& c = store.get({d, sizing.capacity_before[d], 0});
    const CheEstimate& che = sizing.che[d];
    DatacenterCheck ck;
    ck.datacenter = dc.name;
    ck.layout_before = plan.from;
    ck.layout_after = plan.to;
    ck.capacity = dc.capacity;
    ck.median_rate = dc.rate_median_qps;
    ck.cache_entries = c.plateau_entries;
    ck.cache_hit_rate = c.plateau_hit_rate;
    ck.cache_reached_plateau = c.reached_plateau;
    ck.sample_rate = c.sample_rate;
    ck.che_entries = che.entries;
    ck.che_hit_rate = che.hit_rate;
    ck.che_fills = che.fills;
    ck.bytes_before = sizing.memory_before[d].bytes_per_entry;
    ck.bytes_after = sizing.memory_after[d].bytes_per_entry;
    ck.resident_ratio_before = sizing.memory_before[d].resident_ratio;
    ck.resident_ratio_after = sizing.memory_after[d].resident_ratio;
    ck.ecs_entry_share = che.ecs_entry_share;
    ck.measured_hit_rate = measured.plateau(d, sizing.capacity_before[d]);
    checks.push_back(ck);
  }
  return checks;
}

}  // namespace

RolloutResult run_rollout(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration,
                          const MeasuredPlateaus& measured) {
  const auto start = std::chrono::steady_clock::now();
  const double start_cpu = process_cpu_seconds();
  RolloutResult res;
  res.step_minutes = plan.step_minutes;
  res.sim_start_day = plan.sim_start_day;
  const std::int64_t total_minutes = (plan.sim_end_day - plan.sim_start_day) * 1440;
  const std::int64_t step = plan.step_minutes;
  res.rollout_start_minute = (plan.start_day - plan.sim_start_day) * 1440;
  res.rollout_end_minute = (plan.end_day - plan.sim_start_day) * 1440;

  const DatacenterSizing sizing = size_datacenters(fleet, plan, calibration);
  for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) {  // before any curve runs
    measured.require_in_range(d, sizing.capacity_before[d]);
    measured.require_in_range(d, sizing.capacity_after[d]);
  }
  std::vector<Instance> instances = place_instances(fleet, plan, total_minutes);
  res.instances = instances.size();

  CurveStore store(fleet);
  for (std::size_t d = 0; d < fleet.datacenters.size(); ++d) store.set_outage_minutes(d, plan.longest_outage(d));
  compute_curves(store, fleet, instances, sizing);
  res.curves = store.size();
  res.sampled_requests = store.sampled_requests();
  res.cache_seconds = store.cache_seconds();
  res.memory_accesses = store.memory_accesses();
  res.segment_bytes = store.request_weighted_segment_bytes();
  const auto curves_done = std::chrono::steady_clock::now();
  res.curves_s = std::chrono::duration<double>(curves_done - start).count();
  const double curves_cpu = process_cpu_seconds();
  res.curves_cpu_s = curves_cpu - start_cpu;

  AgeTables tables(fleet, store, sizing, step, measured);
  tables.assign(instances);
  resolve_warm_upgrades(instances, tables.tables(), step);
  const FleetWalk walk = make_walk(instances, tables.tables(), tables.index_values(), step, total_minutes / step + 1);
  span_runner().run(walk, res.steps);
  res.fleet_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - curves_done).count();
  res.fleet_cpu_s = process_cpu_seconds() - curves_cpu;

  summarize_plateaus(res, total_minutes);
  apply_outages(res, fleet, plan, instances, tables.tables(), step);
  res.checks = datacenter_checks(fleet, plan, store, sizing, measured);
  res.fit = fit_process_memory(fleet, plan, res);
  return res;
}

ProcessMemoryFit fit_process_memory(const FleetConfig& fleet, const RolloutPlan& plan, const RolloutResult& r) {
  ProcessMemoryFit f;
  if (!(plan.published_p90_before_gb > 0 && plan.published_p99_before_gb > 0)) {
    f.why_not = "the plan gives no published before-state (published: {p90_before_gb, p99_before_gb})";
    return f;
  }
  const double p0 = fleet.datacenters.front().process_gb;
  for (const Datacenter& d : fleet.datacenters)
    if (d.process_gb != p0) {
      f.why_not = "process_gb differs across datacenters ('" + d.name + "'): a percentile is not P0 + the cache's";
      return f;
    }
  f.assumed_process_gb = p0;
  // Two points of pub = P + k x cache, cache = predicted - P0.
  auto solve = [&](double c90, double c99, double pub90, double pub99, double* p, double* k) {
    if (!(c99 - c90 > 1e-9)) return false;
    *k = (pub99 - pub90) / (c99 - c90);
    *p = pub90 - *k * c90;
    return true;
  };
  if (!solve(r.p90_before - p0, r.p99_before - p0, plan.published_p90_before_gb, plan.published_p99_before_gb,
             &f.process_gb, &f.cache_scale)) {
    f.why_not = "the predicted before-state has p99 <= p90: no slope to fit";
    return f;
  }
  f.fitted = true;
  f.p90_after_gb = f.process_gb + f.cache_scale * (r.p90_after - p0);
  f.p99_after_gb = f.process_gb + f.cache_scale * (r.p99_after - p0);
  if (plan.published_p90_after_gb > 0 && plan.published_p99_after_gb > 0)
    f.after_fitted = solve(r.p90_after - p0, r.p99_after - p0, plan.published_p90_after_gb,
                           plan.published_p99_after_gb, &f.after_process_gb, &f.after_cache_scale);
  return f;
}

void write_rollout_csv(const RolloutResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  const bool outages = !r.outages.empty();
  out << "time,day,share_upgraded,p50_gb,p90_gb,p98_gb,p99_gb,fleet_total_gb,mean_hit_rate,upstream_qps"
      << (outages ? ",stale_share,failed_share\n" : "\n");
  char buf[320];
  for (const auto& s : r.steps) {
    const std::int64_t day = r.sim_start_day + s.minute / 1440;
    const int mod = static_cast<int>(s.minute % 1440);
    std::snprintf(buf, sizeof buf, "%sT%02d:%02d,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.5f,%.1f",
                  format_date_days(day).c_str(), mod / 60, mod % 60, s.minute / 1440.0, s.share_upgraded, s.p50_gb,
                  s.p90_gb, s.p98_gb, s.p99_gb, s.fleet_total_gb, s.mean_hit_rate, s.upstream_qps);
    out << buf;
    if (outages) {
      std::snprintf(buf, sizeof buf, ",%.6f,%.6f", s.stale_share, s.failed_share);
      out << buf;
    }
    out << '\n';
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace dnsarena::sim::fleet

#include "rollout_sim.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "che_model.hpp"
#include "memory_model.hpp"
#include "rank_histogram.hpp"
#include "sampled_trace.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

namespace {

constexpr double kGB = 1e9;

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

// RSS (bytes), hit rate by age in steps, for one curve under one layout; past the end: last value.
struct AgeTable {
  std::vector<float> rss, hit, entries;
  std::vector<std::uint32_t> rss_index;  // each rss value's index in the fleet's sorted distinct RSS values
  std::size_t last(std::int64_t age) const { return std::min<std::size_t>(static_cast<std::size_t>(age), rss.size() - 1); }
  bool settled(std::int64_t age) const { return static_cast<std::size_t>(age) + 1 >= rss.size(); }  // constant from here on
};

// One instance's state while a span of steps is walked.
struct InstanceState {
  std::size_t event = 0;       // index of the instance's latest event
  std::uint32_t value = 0;     // RSS value index
  float rss = 0, hit = 0;
};

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
  AgeTables(const FleetConfig& fleet, const CurveStore& store, const DatacenterSizing& sizing, std::int64_t step)
      : fleet_(fleet), store_(store), sizing_(sizing), step_(step) {}

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
      t.hit.push_back(static_cast<float>(curve.hit_rate_at(age)));
      t.entries.push_back(static_cast<float>(curve.entries_at(age)));
    }
    tables_.push_back(std::move(t));
    return it->second;
  }

  const FleetConfig& fleet_;
  const CurveStore& store_;
  const DatacenterSizing& sizing_;
  std::int64_t step_;
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

// Walks steps [first, end) of the fleet: every instance's RSS and hit rate at each step,
// the exact percentiles of RSS, totals. An instance is revisited only when its value can
// change: every step while it is on its curve, then at its next event (restart, upgrade).
class SpanWalker {
public:
  SpanWalker(const std::vector<Instance>& instances, const std::vector<AgeTable>& tables, const std::vector<float>& distinct,
             std::int64_t step, std::int64_t first, std::int64_t end)
      : instances_(instances),
        tables_(tables),
        distinct_(distinct),
        step_(step),
        first_(first),
        end_(end),
        histogram_(distinct.size()),
        state_(instances.size()),
        wake_(static_cast<std::size_t>(end - first)) {}

  void walk(const std::size_t (&ranks)[4], std::vector<RolloutStep>& steps) {
    const std::size_t count = instances_.size();
    for (std::size_t i = 0; i < count; ++i) {
      visit(i, first_, true);
      requests_ += instances_[i].rate;
    }
    for (std::int64_t s = first_; s < end_; ++s) {
      if (s > first_)
        for (std::uint32_t i : wake_[static_cast<std::size_t>(s - first_)]) visit(i, s, false);
      std::uint32_t pick[4];
      histogram_.select(ranks, 4, pick);
      RolloutStep& st = steps[static_cast<std::size_t>(s)];
      st.minute = s * step_;
      st.p50_gb = distinct_[pick[0]] / kGB, st.p90_gb = distinct_[pick[1]] / kGB;
      st.p98_gb = distinct_[pick[2]] / kGB, st.p99_gb = distinct_[pick[3]] / kGB;
      st.fleet_total_gb = total_rss_ / kGB;
      st.mean_hit_rate = requests_ > 0 ? hits_ / requests_ : 0;
      st.upstream_qps = requests_ - hits_;
      st.share_upgraded = upgraded_ / static_cast<double>(count);
    }
  }

private:
  // Sets instance i's value at step s and schedules its next visit within the span.
  void visit(std::size_t i, std::int64_t s, bool first) {
    const Instance& in = instances_[i];
    InstanceState& st = state_[i];
    const std::int64_t minute = s * step_;
    if (first) {
      st.event = static_cast<std::size_t>(std::upper_bound(in.events.begin(), in.events.end(), minute,
                                                           [](std::int64_t m, const Event& ev) { return m < ev.minute; }) -
                                          in.events.begin()) -
                 1;
    } else {
      histogram_.remove(st.value);
      total_rss_ -= st.rss;
      hits_ -= in.rate * st.hit;
      upgraded_ -= in.events[st.event].version;  // re-added below: the version may change
      while (st.event + 1 < in.events.size() && in.events[st.event + 1].minute <= minute) ++st.event;
    }
    const Event& ev = in.events[st.event];
    const AgeTable& t = tables_[in.table[ev.version]];
    const std::int64_t age = (minute - ev.minute) / step_ + ev.start_age;
    const std::size_t at = t.last(age);
    st.value = t.rss_index[at];
    st.rss = t.rss[at];
    st.hit = t.hit[at];
    histogram_.add(st.value);
    total_rss_ += st.rss;
    hits_ += in.rate * st.hit;
    upgraded_ += ev.version;
    // Next visit: the next step while on the curve, else the step of the next event.
    std::int64_t next = s + 1;
    if (t.settled(age)) {
      if (st.event + 1 >= in.events.size()) return;
      next = std::max(s + 1, (in.events[st.event + 1].minute + step_ - 1) / step_);
    }
    if (next < end_) wake_[static_cast<std::size_t>(next - first_)].push_back(static_cast<std::uint32_t>(i));
  }

  const std::vector<Instance>& instances_;
  const std::vector<AgeTable>& tables_;
  const std::vector<float>& distinct_;
  std::int64_t step_, first_, end_;
  RankHistogram histogram_;
  std::vector<InstanceState> state_;
  std::vector<std::vector<std::uint32_t>> wake_;
  double total_rss_ = 0, hits_ = 0, requests_ = 0, upgraded_ = 0;
};

// The steps, cut into spans walked in parallel.
void walk_steps(const std::vector<Instance>& instances, const std::vector<AgeTable>& tables, const std::vector<float>& distinct,
                std::int64_t step, std::vector<RolloutStep>& steps) {
  const std::int64_t count = static_cast<std::int64_t>(steps.size());
  const std::size_t n = instances.size();
  std::size_t ranks[4];
  const double quantiles[4] = {0.50, 0.90, 0.98, 0.99};
  for (int q = 0; q < 4; ++q) {
    // Nearest rank: the smallest value with at least q * n values at or below it.
    const double rank = std::ceil(quantiles[q] * static_cast<double>(n));
    ranks[q] = std::min(n - 1, static_cast<std::size_t>(std::max(1.0, rank)) - 1);
  }
  const std::int64_t spans = std::min<std::int64_t>(count, 32);
  tbb::parallel_for(std::int64_t{0}, spans, [&](std::int64_t span) {
    SpanWalker walker(instances, tables, distinct, step, count * span / spans, count * (span + 1) / spans);
    walker.walk(ranks, steps);
  });
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

// Each datacenter's curve at the median rate beside Che's estimate.
std::vector<DatacenterCheck> datacenter_checks(const FleetConfig& fleet, const RolloutPlan& plan, const CurveStore& store,
                                               const DatacenterSizing& sizing) {
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
    checks.push_back(ck);
  }
  return checks;
}

}  // namespace

RolloutResult run_rollout(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration) {
  const auto start = std::chrono::steady_clock::now();
  RolloutResult res;
  res.step_minutes = plan.step_minutes;
  res.sim_start_day = plan.sim_start_day;
  const std::int64_t total_minutes = (plan.sim_end_day - plan.sim_start_day) * 1440;
  const std::int64_t step = plan.step_minutes;
  res.rollout_start_minute = (plan.start_day - plan.sim_start_day) * 1440;
  res.rollout_end_minute = (plan.end_day - plan.sim_start_day) * 1440;

  const DatacenterSizing sizing = size_datacenters(fleet, plan, calibration);
  std::vector<Instance> instances = place_instances(fleet, plan, total_minutes);
  res.instances = instances.size();

  CurveStore store(fleet);
  compute_curves(store, fleet, instances, sizing);
  res.curves = store.size();
  res.sampled_requests = store.sampled_requests();
  res.cache_seconds = store.cache_seconds();
  res.memory_accesses = store.memory_accesses();
  res.segment_bytes = store.request_weighted_segment_bytes();
  const auto curves_done = std::chrono::steady_clock::now();
  res.curves_s = std::chrono::duration<double>(curves_done - start).count();

  AgeTables tables(fleet, store, sizing, step);
  tables.assign(instances);
  resolve_warm_upgrades(instances, tables.tables(), step);
  const std::vector<float> distinct = tables.index_values();
  res.steps.resize(static_cast<std::size_t>(total_minutes / step + 1));
  walk_steps(instances, tables.tables(), distinct, step, res.steps);
  res.fleet_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - curves_done).count();

  summarize_plateaus(res, total_minutes);
  res.checks = datacenter_checks(fleet, plan, store, sizing);
  return res;
}

void write_rollout_csv(const RolloutResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << "time,day,share_upgraded,p50_gb,p90_gb,p98_gb,p99_gb,fleet_total_gb,mean_hit_rate,upstream_qps\n";
  char buf[320];
  for (const auto& s : r.steps) {
    const std::int64_t day = r.sim_start_day + s.minute / 1440;
    const int mod = static_cast<int>(s.minute % 1440);
    std::snprintf(buf, sizeof buf, "%sT%02d:%02d,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.5f,%.1f\n",
                  format_date_days(day).c_str(), mod / 60, mod % 60, s.minute / 1440.0, s.share_upgraded, s.p50_gb,
                  s.p90_gb, s.p98_gb, s.p99_gb, s.fleet_total_gb, s.mean_hit_rate, s.upstream_qps);
    out << buf;
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace dnsarena::sim::fleet

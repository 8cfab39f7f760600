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
};

struct Instance {
  std::uint32_t dc = 0;
  double rate = 0;
  std::uint32_t table[2] = {0, 0};  // RSS table per version
  std::vector<Event> events;        // sorted by minute
};

// RSS (bytes), hit rate by age in steps, for one curve under one layout; past the end: last value.
struct AgeTable {
  std::vector<float> rss, hit;
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

RolloutResult run_rollout(const FleetConfig& fleet, const RolloutPlan& plan, Calibration& calibration) {
  const auto t0 = std::chrono::steady_clock::now();
  RolloutResult res;
  res.step_minutes = plan.step_minutes;
  res.sim_start_day = plan.sim_start_day;
  const std::int64_t total_minutes = (plan.sim_end_day - plan.sim_start_day) * 1440;
  const std::int64_t step = plan.step_minutes;
  const std::int64_t steps = total_minutes / step + 1;
  res.rollout_start_minute = (plan.start_day - plan.sim_start_day) * 1440;
  res.rollout_end_minute = (plan.end_day - plan.sim_start_day) * 1440;

  // 1. Per datacenter: the layouts' bytes per entry on its own mix, capacities.
  const std::size_t ndc = fleet.datacenters.size();
  std::vector<LayoutMemory> mem_before(ndc), mem_after(ndc);
  std::vector<std::uint64_t> cap_before(ndc), cap_after(ndc);
  std::vector<CheEstimate> che(ndc);
  std::vector<MixProfile> mixes;
  for (std::size_t d = 0; d < ndc; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    che[d] = che_estimate(dc.traffic, dc.rate_median_qps, dc.capacity, curve_seed(fleet, d));
    mixes.push_back(to_mix_profile(dc.traffic, che[d].ecs_entry_share));
  }
  calibration.measure_missing(mixes);
  for (std::size_t d = 0; d < ndc; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    const MixProfile& mix = mixes[d];
    const LayoutBytes& b = calibration.layout(mix, plan.from);
    const LayoutBytes& a = calibration.layout(mix, plan.to);
    mem_before[d] = layout_memory(b.layout, b.net_bytes, b.alloc_bytes);
    mem_after[d] = layout_memory(a.layout, a.net_bytes, a.alloc_bytes);
    cap_before[d] = dc.capacity;
    double factor = 1.0;
    if (plan.capacity_change == "reinvest") factor = mem_before[d].bytes_per_entry / mem_after[d].bytes_per_entry;
    else if (plan.capacity_change == "factor") factor = plan.capacity_factor;
    cap_after[d] = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(dc.capacity * factor)));
  }

  // 2. Instances: rate, wave, restarts. Deterministic in (fleet seed, global index).
  std::vector<Instance> inst;
  inst.reserve(fleet.total_instances());
  for (std::size_t d = 0; d < ndc; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    for (std::uint32_t i = 0; i < dc.instances; ++i) {
      const std::uint64_t h = mix64(fleet.seed * 0x9E3779B97F4A7C15ULL + inst.size() * 0xD1B54A32D192ED03ULL + 17);
      Instance in;
      in.dc = static_cast<std::uint32_t>(d);
      in.rate = dc.rate_median_qps * std::exp(dc.rate_spread * normal(h));
      SplitMix64 rng(h);
      const double per_minute = dc.restarts_per_day / 1440.0;
      // Initial uptime: memoryless restart process (no restarts: up since long ago).
      std::int64_t last = per_minute > 0 ? -static_cast<std::int64_t>(std::ceil(-std::log(1.0 - rng.unit()) / per_minute))
                                         : -(std::int64_t{1} << 40);
      in.events.push_back({last, 0});
      // Upgrade wave.
      const double u = rng.unit(), v = rng.unit();
      std::int64_t upgrade = -1;
      for (const auto& w : plan.waves) {
        const bool named = std::find(w.datacenters.begin(), w.datacenters.end(), dc.name) != w.datacenters.end();
        if (named || u < w.share) {
          upgrade = (w.day - plan.sim_start_day) * 1440 + static_cast<std::int64_t>(v * plan.wave_spread_hours * 60);
          break;
        }
      }
      // Random restarts over the simulated span.
      std::vector<std::int64_t> random;
      if (per_minute > 0)
        for (double tm = -std::log(1.0 - rng.unit()) / per_minute; tm < total_minutes;
             tm += -std::log(1.0 - rng.unit()) / per_minute)
          random.push_back(static_cast<std::int64_t>(tm));
      for (std::int64_t r : random)
        if (upgrade < 0 || r < upgrade) in.events.push_back({r, 0});
      if (upgrade >= 0 && upgrade <= total_minutes) {
        in.events.push_back({upgrade, 1});
        for (std::int64_t r : random)
          if (r > upgrade) in.events.push_back({r, 1});
      }
      std::sort(in.events.begin(), in.events.end(), [](const Event& a, const Event& b) { return a.minute < b.minute; });
      inst.push_back(std::move(in));
    }
  }
  res.instances = inst.size();

  // 3. Curves, once per (dc, capacity, rate bucket), in parallel.
  CurveStore store(fleet);
  std::vector<CurveKey> keys;
  for (const auto& in : inst) {
    const int b = rate_bucket(fleet.datacenters[in.dc].rate_median_qps, in.rate);
    keys.push_back({in.dc, cap_before[in.dc], b});
    keys.push_back({in.dc, cap_after[in.dc], b});
  }
  for (std::size_t d = 0; d < ndc; ++d) keys.push_back({d, cap_before[d], 0});
  store.compute(keys);
  res.curves = store.size();
  res.sampled_requests = store.sampled_requests();
  res.cache_seconds = store.cache_seconds();
  const auto t1 = std::chrono::steady_clock::now();
  res.curves_s = std::chrono::duration<double>(t1 - t0).count();

  // 4. RSS-by-age tables per (curve, version), in steps.
  std::map<std::tuple<CurveKey, int>, std::uint32_t> table_index;
  std::vector<AgeTable> tables;
  auto table_for = [&](const CurveKey& k, int version) {
    auto [it, fresh] = table_index.try_emplace({k, version}, static_cast<std::uint32_t>(tables.size()));
    if (!fresh) return it->second;
    const OccupancyCurve& c = store.get(k);
    const Datacenter& dc = fleet.datacenters[k.dc];
    const LayoutMemory& m = version ? mem_after[k.dc] : mem_before[k.dc];
    AgeTable t;
    const std::size_t n = c.entries.size() / static_cast<std::size_t>(step) + 2;
    for (std::size_t s = 0; s < n; ++s) {
      const std::size_t age = s * static_cast<std::size_t>(step);
      t.rss.push_back(static_cast<float>(dc.process_gb * kGB +
                                         cache_resident_bytes(m, static_cast<double>(k.capacity), c.entries_at(age),
                                                              c.inserted_at(age))));
      t.hit.push_back(static_cast<float>(c.hit_rate_at(age)));
    }
    tables.push_back(std::move(t));
    return it->second;
  };
  for (auto& in : inst) {
    const int b = rate_bucket(fleet.datacenters[in.dc].rate_median_qps, in.rate);
    in.table[0] = table_for({in.dc, cap_before[in.dc], b}, 0);
    in.table[1] = table_for({in.dc, cap_after[in.dc], b}, 1);
  }

  // 5. Steps. The distinct RSS values of all tables, sorted, index an exact rank
  //    histogram (rank_histogram.hpp). The steps are cut into spans walked in parallel;
  //    within a span an instance is revisited only when its value can change: every
  //    step while it is on its curve, then at its next event (restart, upgrade).
  std::vector<float> distinct;
  for (const AgeTable& t : tables) distinct.insert(distinct.end(), t.rss.begin(), t.rss.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (AgeTable& t : tables) {
    t.rss_index.resize(t.rss.size());
    for (std::size_t a = 0; a < t.rss.size(); ++a)
      t.rss_index[a] = static_cast<std::uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), t.rss[a]) - distinct.begin());
  }
  res.steps.resize(static_cast<std::size_t>(steps));
  const std::size_t n = inst.size();
  std::size_t ranks[4];
  const double quantiles[4] = {0.50, 0.90, 0.98, 0.99};
  for (int q = 0; q < 4; ++q) {
    // Nearest rank: the smallest value with at least q * n values at or below it.
    const double rank = std::ceil(quantiles[q] * static_cast<double>(n));
    ranks[q] = std::min(n - 1, static_cast<std::size_t>(std::max(1.0, rank)) - 1);
  }
  const std::int64_t spans = std::min<std::int64_t>(steps, 32);
  tbb::parallel_for(std::int64_t{0}, spans, [&](std::int64_t sp) {
    const std::int64_t s0 = steps * sp / spans, s1 = steps * (sp + 1) / spans;
    RankHistogram hist(distinct.size());
    std::vector<InstanceState> state(n);
    std::vector<std::vector<std::uint32_t>> wake(static_cast<std::size_t>(s1 - s0));
    double total = 0, hits = 0, reqs = 0, upgraded = 0;
    // Sets instance i's value at step s and schedules its next visit within the span.
    auto visit = [&](std::size_t i, std::int64_t s, bool first) {
      const Instance& in = inst[i];
      InstanceState& st = state[i];
      const std::int64_t minute = s * step;
      if (first) {
        st.event = static_cast<std::size_t>(
            std::upper_bound(in.events.begin(), in.events.end(), minute,
                             [](std::int64_t m, const Event& ev) { return m < ev.minute; }) - in.events.begin()) - 1;
      } else {
        hist.remove(st.value);
        total -= st.rss;
        hits -= in.rate * st.hit;
        upgraded -= in.events[st.event].version;  // re-added below: the version may change
        while (st.event + 1 < in.events.size() && in.events[st.event + 1].minute <= minute) ++st.event;
      }
      const Event& ev = in.events[st.event];
      const AgeTable& t = tables[in.table[ev.version]];
      const std::int64_t age = (minute - ev.minute) / step;
      const std::size_t a = t.last(age);
      st.value = t.rss_index[a];
      st.rss = t.rss[a];
      st.hit = t.hit[a];
      hist.add(st.value);
      total += st.rss;
      hits += in.rate * st.hit;
      upgraded += ev.version;
      // Next visit: the next step while on the curve, else the step of the next event.
      std::int64_t next = s + 1;
      if (t.settled(age)) {
        if (st.event + 1 >= in.events.size()) return;
        next = std::max(s + 1, (in.events[st.event + 1].minute + step - 1) / step);
      }
      if (next < s1) wake[static_cast<std::size_t>(next - s0)].push_back(static_cast<std::uint32_t>(i));
    };
    for (std::size_t i = 0; i < n; ++i) {
      visit(i, s0, true);
      reqs += inst[i].rate;
    }
    for (std::int64_t s = s0; s < s1; ++s) {
      if (s > s0)
        for (std::uint32_t i : wake[static_cast<std::size_t>(s - s0)]) visit(i, s, false);
      std::uint32_t pick[4];
      hist.select(ranks, 4, pick);
      RolloutStep& st = res.steps[static_cast<std::size_t>(s)];
      st.minute = s * step;
      st.p50_gb = distinct[pick[0]] / kGB, st.p90_gb = distinct[pick[1]] / kGB;
      st.p98_gb = distinct[pick[2]] / kGB, st.p99_gb = distinct[pick[3]] / kGB;
      st.fleet_total_gb = total / kGB;
      st.mean_hit_rate = reqs > 0 ? hits / reqs : 0;
      st.upstream_qps = reqs - hits;
      st.share_upgraded = upgraded / static_cast<double>(n);
    }
  });
  res.fleet_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

  // 6. Plateaus: before = mean over the span before the rollout; after = mean over the
  //    last 7 days (or the whole span after the rollout end if shorter).
  const std::int64_t after_from = std::max(res.rollout_end_minute, total_minutes - 7 * 1440);
  res.p50_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p50_gb);
  res.p90_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p90_gb);
  res.p98_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p98_gb);
  res.p99_before = mean_over(res.steps, 0, res.rollout_start_minute, &RolloutStep::p99_gb);
  res.p50_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p50_gb);
  res.p90_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p90_gb);
  res.p98_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p98_gb);
  res.p99_after = mean_over(res.steps, after_from, total_minutes + 1, &RolloutStep::p99_gb);

  for (std::size_t d = 0; d < ndc; ++d) {
    const Datacenter& dc = fleet.datacenters[d];
    const OccupancyCurve& c = store.get({d, cap_before[d], 0});
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
    ck.che_entries = che[d].entries;
    ck.che_hit_rate = che[d].hit_rate;
    ck.che_fills = che[d].fills;
    ck.bytes_before = mem_before[d].bytes_per_entry;
    ck.bytes_after = mem_after[d].bytes_per_entry;
    ck.ecs_entry_share = che[d].ecs_entry_share;
    res.checks.push_back(ck);
  }
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

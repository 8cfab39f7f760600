// SPDX-License-Identifier: GPL-3.0-or-later
// Fleet and rollout-plan configs (YAML), and what they describe.
//
// A fleet file lists datacenters; each describes its instances (count, query rate
// spread), its traffic (`traffic:`, the one traffic-profile schema of
// sim/workload/traffic_profile.hpp, read by the same reader) and its memory (budget, process memory outside the cache,
// cache capacity in entries, random restarts) and how its resolvers ride out upstream
// failures (`stale: {max_age_s}`, `prefetch: {percent}`: serve's options of the same
// names). A datacenter may start from a shared
// profile file (`from: ../datacenters/x.yaml`) and override keys.
//
// A rollout plan names the from- and to-layout, the rollout dates, waves (a cumulative
// share of instances, or named datacenters), an optional capacity change at upgrade,
// whether the upgrade restarts warm or cold (`upgrade: warm|cold`, default cold), and
// optionally the published before- and after-state to compare with (the before-state
// fits the process memory outside the cache, rollout_sim.hpp), and upstream outages per
// datacenter (`outages: [{datacenter, at, minutes}]`, `at` a date or date and time in
// the plan's calendar: "2026-05-03" or "2026-05-03T12:30").
//
// Loading is strict (common/yaml_reader.hpp): unknown keys, wrong types and out-of-range values
// are errors naming file:line:column and key. Cross-field checks (shares summing to 1,
// min <= max, waves in order) report the position of the offending node too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::fleet {

// Bytes in the GB of the fleet file's and the reports' memory figures (*_gb): 10^9.
inline constexpr double kGB = 1e9;

// A datacenter's traffic is the one traffic model (sim/workload/traffic_profile.hpp).
using sim::TrafficProfile;
using sim::TtlBucket;

struct Datacenter {
  std::string name;
  std::string file;  // where it was defined (messages)
  std::uint32_t instances = 1;
  double rate_median_qps = 10'000;
  double rate_spread = 0.3;  // sigma of ln(rate) across instances
  TrafficProfile traffic;
  double memory_budget_gb = 16;
  double process_gb = 1.0;     // process memory outside the cache
  std::uint64_t capacity = 1'000'000;  // cache capacity in entries
  double restarts_per_day = 0.0;       // random restarts per instance per day
  // Serve-stale (RFC 8767, serve's stale.max_age_s): an expired entry still held by the
  // arena is answered for this long past its TTL when the upstream fails; 0 = off.
  std::uint32_t stale_max_age_s = 86'400;
  // Prefetch (serve's prefetch.percent; Unbound's `prefetch`): a hit in the last this
  // percent of its entry's TTL refreshes the entry in the background; 0 = off: the
  // model's default, so that fleet files without the key keep their curves (serve's own
  // default is 10: a fleet modelling serve's defaults says `prefetch: {percent: 10}`).
  double prefetch_percent = 0;
};

struct FleetConfig {
  std::string name;
  std::string file;
  std::uint64_t seed = 1;
  std::string layout = "v0";       // layout running before any rollout
  std::uint32_t sample_entries = 32'768;  // SHARDS: target sampled cache entries (R = this / capacity)
  double max_sample_rate = 1.0;
  std::uint32_t curve_max_days = 14;   // longest cold-start curve computed before assuming a plateau
  std::uint64_t calibration_entries = 200'000;  // entries per layout measurement
  std::vector<Datacenter> datacenters;
  std::uint64_t total_instances() const;
};

struct Wave {
  std::int64_t day = 0;        // days since 1970-01-01
  double share = 0.0;          // cumulative share of all instances upgraded by this wave (0 = none)
  std::vector<std::string> datacenters;  // upgraded entirely in this wave
};

// An upstream outage of one datacenter: from `minute` (since the simulation start) for
// `minutes`, every instance of the datacenter gets no answer from its upstreams.
struct Outage {
  std::string datacenter;
  std::size_t dc = 0;       // index in FleetConfig::datacenters
  std::int64_t minute = 0;  // since sim_start
  std::uint32_t minutes = 0;
};

struct RolloutPlan {
  std::string file;
  std::string from = "v0", to = "v5";
  std::int64_t start_day = 0, end_day = 0;
  std::int64_t sim_start_day = 0, sim_end_day = 0;
  std::uint32_t step_minutes = 1;
  double wave_spread_hours = 24;  // restarts of one wave spread over this long
  std::vector<Wave> waves;
  // Capacity at upgrade: "none", "reinvest" (keep the cache's bytes, so capacity grows by
  // bytes_before / bytes_after), or a factor.
  std::string capacity_change = "none";
  double capacity_factor = 1.0;
  // The upgrade's restart: cold starts the new version empty; warm migrates
  // the cache (the entries the new capacity holds, and with them the hit rate). Random
  // restarts start cold either way.
  bool warm_upgrade = false;
  // Published after-state RSS for this rollout (GB; 0 = none), printed beside the
  // prediction with its error (`published: {p90_after_gb: .., p99_after_gb: ..}`).
  double published_p90_after_gb = 0, published_p99_after_gb = 0;
  // Published before-state RSS (GB; 0 = none): with both, the process memory outside the
  // cache and a scale of the cache's bytes are fitted to it (rollout_sim.hpp).
  double published_p90_before_gb = 0, published_p99_before_gb = 0;
  std::vector<Outage> outages;  // sorted by (datacenter index, minute); none overlap within a datacenter
  // The longest outage of datacenter `dc` (0: none): its curves run an outage that long.
  std::uint32_t longest_outage(std::size_t dc) const;
};

// Throw ConfigError ("file:line:col: key 'k': ...").
FleetConfig load_fleet(const std::string& path);
RolloutPlan load_plan(const std::string& path, const FleetConfig& fleet);

// Parses a date "YYYY-MM-DD" (rollout plans) to days since 1970-01-01; throws
// std::invalid_argument.
std::int64_t parse_date_days(const std::string& s);
// "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM" to minutes since 1970-01-01; throws std::invalid_argument.
std::int64_t parse_date_time_minutes(const std::string& s);
std::string format_date_days(std::int64_t days);

}  // namespace dnsarena::sim::fleet

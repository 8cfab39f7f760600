// Fleet and rollout-plan configs (YAML), and what they describe.
//
// A fleet file lists datacenters; each describes its instances (count, query rate
// spread), its traffic (name universe, Zipf popularity, qtype mix, records, rdata sizes,
// TTLs, negative answers, ECS) and its memory (budget, process memory outside the cache,
// cache capacity in entries, random restarts). A datacenter may start from a shared
// profile file (`from: ../datacenters/x.yaml`) and override keys.
//
// A rollout plan names the from- and to-layout, the rollout dates, waves (a cumulative
// share of instances, or named datacenters) and an optional capacity change at upgrade.
//
// Loading is strict (common/yaml_reader.hpp): unknown keys, wrong types and out-of-range values
// are errors naming file:line:column and key. Cross-field checks (shares summing to 1,
// min <= max, waves in order) report the position of the offending node too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/seed_mix.hpp"

namespace dnsarena::sim::fleet {

struct TtlBucket {
  std::uint32_t seconds = 300;
  double share = 1.0;
};

// The traffic one datacenter's instances see (every instance the same mix, its own rate).
struct TrafficProfile {
  std::uint64_t names = 10'000'000;  // name universe
  double zipf = 0.9;                 // popularity exponent
  double share_a = 0.56, share_aaaa = 0.25, share_other = 0.19;
  // false: every request draws its qtype from the shares (a name is asked for several
  // types); true: every name has one qtype, drawn from the shares by the name's hash
  // (the synthetic upstream's zone, `sim upstream`, is built this way).
  bool qtype_per_name = false;
  unsigned records_min = 1, records_max = 4;
  unsigned other_rdata_min = 64, other_rdata_max = 224;
  std::vector<TtlBucket> ttl{{60, 0.2}, {300, 0.4}, {3600, 0.4}};
  double negative_share = 0.0;
  std::uint32_t negative_ttl = 300;
  // Stray queries: a share of a name's requests asks for something the name does not
  // have (another type: NODATA; a misspelt neighbour: NXDOMAIN), spread over `stray_keys`
  // extra keys per name, each answered negatively with negative_ttl. Their rate is a
  // small share of the name's, so they miss far more often than the name's own keys.
  double stray_share = 0.0;
  std::uint32_t stray_keys = 1;
  double ecs_share = 0.0;        // share of names answered per client subnet
  std::uint32_t ecs_subnets = 1;  // active client subnets
  std::uint8_t ecs_prefix = 24;   // scope prefix
  std::uint32_t max_ttl() const;
};

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
};

// Throw ConfigError ("file:line:col: key 'k': ...").
FleetConfig load_fleet(const std::string& path);
RolloutPlan load_plan(const std::string& path, const FleetConfig& fleet);

// The seed-mix generator profile closest to a datacenter's traffic (for layout calibration).
// `ecs_entry_share` is the share of cached entries that are ECS-keyed (from the model).
MixProfile to_mix_profile(const TrafficProfile& t, double ecs_entry_share);

// Parses a date "YYYY-MM-DD" (rollout plans) to days since 1970-01-01; throws
// std::invalid_argument.
std::int64_t parse_date_days(const std::string& s);
std::string format_date_days(std::int64_t days);

}  // namespace dnsarena::sim::fleet

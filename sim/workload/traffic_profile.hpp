// SPDX-License-Identifier: GPL-3.0-or-later
// Traffic profile: the one description of a site's DNS traffic, read by every consumer.
//
// One type and one YAML schema serve all of them:
//   * sim/workload's EntryGenerator draws cache entries from it (type per name, records,
//     rdata sizes, name shapes, TTLs, negative / CNAME / ECS traits): `sim layouts`,
//     `bench`, the synthetic upstream's zone (`sim upstream`) and layout calibration;
//   * sim/traffic's load client draws its query stream from it (Zipf popularity, stray
//     NODATA / NXDOMAIN queries, ECS client subnets, `qps`);
//   * sim/fleet's model (sampled traces, Che's approximation) reads the same fields for
//     each datacenter (`traffic:` of a datacenter file is this schema).
//
// YAML (every key optional; keys absent keep the defaults below, which are the
// published fleet's benchmark mix with no ECS, negative, CNAME or stray traffic):
//
//     names: 100000              # name universe: name index 0..names-1
//     zipf: 0.9                  # popularity exponent: P(rank k) ~ 1/k^zipf
//     qps: 1000                  # rate of `sim load` (a datacenter's rate is rate_qps)
//     qtypes: {a: 0.56, aaaa: 0.25, other: 0.19, per_name: false}   # shares sum to 1
//     records: {min: 1, max: 4}           # records per answer
//     other_rdata_bytes: {min: 64, max: 224}   # rdata of the "other" type (TXT)
//     labels: {min: 2, max: 4}            # labels of a name before the zone
//     label_bytes: {min: 3, max: 12}      # letters per label
//     ttl: {min: 60, max: 3600}           # uniform, or buckets:
//     # ttl: [{seconds: 60, share: 0.2}, {seconds: 300, share: 0.8}]
//     negative: {share: 0.0, ttl: 300}    # names answering NXDOMAIN / NODATA; SOA minimum
//     cname: {share: 0.0}                 # answers behind "name CNAME cdn.name."
//     stray: {nodata_share: 0.0, nxdomain_share: 0.0}   # queries for what does not exist
//     ecs: {share: 0.0, subnets: 0, prefix: 24, prefix_v6: 56}   # RFC 7871
//
// Errors are common::ConfigError "file:line:column: key 'k': reason" (the strict reader,
// common/yaml_reader.hpp); unknown keys and out-of-range values are rejected.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config_error.hpp"

namespace dnsarena::common {
class MapReader;  // common/yaml_reader.hpp
}

namespace dnsarena::sim {

struct TtlBucket {
  std::uint32_t seconds = 300;
  double share = 1.0;
  bool operator==(const TtlBucket&) const = default;
};

// TTLs of positive answers: uniform in [uniform_min, uniform_max], or drawn from buckets.
// Both views always exist: a uniform range is also kUniformTtlBuckets equal-share
// buckets at slice midpoints (what the fleet model reads); a bucket list is also the
// uniform range lowest..highest bucket (what the entry generator draws from).
struct TtlDistribution {
  static constexpr unsigned kUniformTtlBuckets = 32;
  bool uniform = true;
  std::uint32_t uniform_min = 60, uniform_max = 3600;  // only when `uniform`
  std::vector<TtlBucket> buckets = uniform_buckets(60, 3600);

  static TtlDistribution range(std::uint32_t lo, std::uint32_t hi);
  static TtlDistribution from_buckets(std::vector<TtlBucket> b);
  static std::vector<TtlBucket> uniform_buckets(std::uint32_t lo, std::uint32_t hi);
  std::uint32_t lowest() const;   // the generator's uniform range
  std::uint32_t highest() const;
  bool operator==(const TtlDistribution&) const = default;
};

struct TrafficProfile {
  // Names and popularity.
  std::uint64_t names = 100'000;
  double zipf = 0.9;
  double qps = 1000;  // default rate of `sim load` (fleet datacenters: rate_qps)
  // Query types. qtype_per_name false: every request draws its qtype from the shares (a
  // name is asked for several types; fleet model); true: every name has one qtype, drawn
  // by the name's hash. The synthetic upstream's zone always has one type per name.
  double share_a = 0.56, share_aaaa = 0.25, share_other = 0.19;
  bool qtype_per_name = false;
  // Answer shape.
  unsigned records_min = 1, records_max = 4;
  unsigned other_rdata_min = 64, other_rdata_max = 224;  // "other" (TXT) rdata bytes
  unsigned labels_min = 2, labels_max = 4;               // labels before the zone
  unsigned label_bytes_min = 3, label_bytes_max = 12;    // letters per label
  TtlDistribution ttl;
  // Negative names: NXDOMAIN / NODATA for every type. negative_ttl is the SOA minimum
  // (the TTL the fleet model gives negative and stray keys; the upstream's TTL of answers
  // for names outside the list).
  double negative_share = 0.0;
  std::uint32_t negative_ttl = 300;
  double cname_share = 0.0;  // answers "name CNAME cdn.name." + the records of cdn.name.
  // Stray queries: a type the name does not have (NODATA) or a name outside the list
  // (NXDOMAIN), as shares of all queries.
  double stray_nodata_share = 0.0, stray_nxdomain_share = 0.0;
  // ECS (RFC 7871): a share of names answered per client subnet, from `ecs_subnets`
  // client /24s (0: clients send no ECS option, every answer is cached once).
  double ecs_share = 0.0;
  std::uint32_t ecs_subnets = 0;
  std::uint8_t ecs_prefix = 24;     // scope of ECS-dependent IPv4 answers
  std::uint8_t ecs_prefix_v6 = 56;  // scope of ECS-dependent IPv6 answers

  // The fleet model's view of stray queries: their share of a name's rate, spread over
  // stray_keys() extra negative keys per name (2 NODATA types, 3 NXDOMAIN types).
  double stray_share() const { return stray_nodata_share + stray_nxdomain_share; }
  std::uint32_t stray_keys() const;
  // Share of names cached per client subnet: ecs_share when clients send ECS, else 0.
  double ecs_keyed_share() const { return ecs_subnets > 0 ? ecs_share : 0.0; }
  std::uint32_t max_ttl() const;  // longest TTL any key can have

  bool operator==(const TrafficProfile&) const = default;
};

// The embedded default of `sim upstream` / `sim load` (configs/profiles/seed.yaml):
// the published fleet's mix plus small shares of ECS, negative, CNAME and stray traffic,
// so that every kind of answer occurs.
TrafficProfile default_traffic_profile();

// Reads the keys of one traffic mapping into `into` (keys absent keep its values). The
// one reader of the schema: profile files and a datacenter's `traffic:`.
void read_traffic_profile(common::MapReader& reader, TrafficProfile& into);
// Parses YAML text whose top level is a traffic mapping; `source` names it in errors.
TrafficProfile parse_traffic_profile(std::string_view yaml_text, const std::string& source);
// Reads and parses a file. Throws common::ConfigError (also for an unreadable file).
TrafficProfile load_traffic_profile(const std::string& path);

}  // namespace dnsarena::sim

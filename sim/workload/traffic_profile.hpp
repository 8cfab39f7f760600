// Traffic profile: what the synthetic upstream serves and what the load client asks.
//
// A profile fixes three things, all deterministic for a given seed:
//   * the zone's content: names 0..names-1, entry i drawn by sim::EntryGenerator from
//     `mix` (type per name, 1-4 records, TXT sizes, TTLs, and the optional NXDOMAIN /
//     NODATA and CNAME traits), plus a share `ecs_share` of names whose answers depend on
//     the client subnet (RFC 7871, scope `ecs_scope_prefix`);
//   * the query stream: name ranks drawn with Zipf(zipf_s) popularity at `qps` queries
//     per second, a share asking another type (NODATA) or a name outside the list
//     (NXDOMAIN), and, when `ecs_client_subnets` > 0, an ECS option from one of that many
//     client /24s (10.x.y.0/24);
//   * the negative TTL (SOA minimum) of answers that are not generated entries.
//
// The embedded default (default_traffic_profile()) is the seed's mix for type shares,
// record counts, TXT sizes and TTLs, with small shares of ECS, negative and CNAME names
// so that every kind of answer occurs; configs/profiles/seed.yaml spells it out.
//
// YAML: every key optional (missing keys keep the default), unknown keys and
// out-of-range values rejected with "file:line:column: key 'k': reason".
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/yaml_reader.hpp"
#include "sim/workload/seed_mix.hpp"

namespace dnsarena::sim {

struct TrafficProfile {
  MixProfile mix = default_mix();  // entry shape; ecs_* fields are taken from below
  std::uint64_t names = 100000;    // name universe size (name index 0..names-1)
  double zipf_s = 0.9;             // popularity exponent of the query stream
  double qps = 1000;               // default target rate of `sim load`
  double ecs_share = 0.10;         // share of names whose answer depends on the client /24
  std::uint32_t ecs_client_subnets = 0;  // client /24s the load client sends ECS from (0: no ECS)
  std::uint8_t ecs_scope_prefix = 24;    // scope of ECS-dependent IPv4 answers
  std::uint8_t ecs_scope_prefix_v6 = 56; // scope of ECS-dependent IPv6 answers
  double query_nodata_share = 0.02;      // queries asking a type the name does not have
  double query_nxdomain_share = 0.01;    // queries for names outside the list ("nx<k>.zone.")
  std::uint32_t negative_ttl = 300;      // SOA minimum / TTL of non-generated negative answers

  // The seed's mix plus small negative and CNAME shares.
  static MixProfile default_mix() {
    MixProfile m;
    m.negative_share = 0.04;
    m.cname_share = 0.05;
    return m;
  }
  // The mix handed to EntryGenerator: `mix` with the ECS trait set from ecs_share /
  // ecs_scope_prefix / ecs_client_subnets (at least 1 subnet, as the generator needs).
  MixProfile generator_mix() const;

  bool operator==(const TrafficProfile& o) const;
};

// A profile error: the message already carries "file:line:column: key 'k': ...". The one
// config error of the strict YAML reader (common/yaml_reader.hpp).
using ProfileError = common::ConfigError;

TrafficProfile default_traffic_profile();
// Parses YAML text; `source` names it in error messages. Throws ProfileError.
TrafficProfile parse_traffic_profile(std::string_view yaml_text, const std::string& source);
// Reads and parses a file. Throws ProfileError (also for an unreadable file).
TrafficProfile load_traffic_profile(const std::string& path);
// Checks ranges and cross-field constraints; throws ProfileError naming `source`.
void validate_traffic_profile(const TrafficProfile& p, const std::string& source);

}  // namespace dnsarena::sim

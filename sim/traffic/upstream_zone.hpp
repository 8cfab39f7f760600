// SPDX-License-Identifier: GPL-3.0-or-later
// The synthetic upstream's zone: names, lookups and answers, without sockets.
//
// Content. Name i (0 <= i < profile.names) is sim::EntryGenerator's qname for (seed, i)
// followed by the zone ("kqzt.abfe.zone."). Entry i fixes the answer: its type (the
// seed's 56% A / 25% AAAA / 19% TXT), 1-4 records, TXT sizes and TTL, and the traits:
//   * negative: NXDOMAIN (rcode 3) or NODATA for every type, SOA in authority;
//   * CNAME: "name CNAME cdn.name." and the records are owned by cdn.name.;
//   * ECS-dependent (RFC 7871): when the query carries an ECS option, the rdata is a
//     function of the client subnet cut to the scope (24 for IPv4, 56 for IPv6 by
//     default) and the response's ECS scope is that prefix; all other answers to
//     queries with ECS carry scope 0. Without ECS in the query, the base rdata.
// Other questions: a type the name does not have -> NODATA (SOA in authority); a name
// in the zone not in the list -> NXDOMAIN (SOA, TTL and minimum = negative_ttl); the apex
// answers SOA and NS ("ns.zone.", which answers A 127.0.0.1); outside the zone ->
// REFUSED; opcode other than QUERY -> NOTIMP; class other than IN -> REFUSED; EDNS
// version > 0 -> BADVERS. NOTE: empty non-terminals (parents of generated names) answer
// NXDOMAIN, not NODATA; resolvers here do not depend on it.
//
// Lookup. A sorted vector of (xxh3 of the zone-relative lowercase wire name, index),
// 16 B per name; a hit is confirmed by regenerating entry i and comparing names, so
// hash collisions are harmless. When two indexes generate the same name, the lowest
// wins. Building it generates every entry once (about 0.5 s per million names).
//
// Responses are written as wire bytes: the question copied as received (case kept),
// owners compressed to the question name, AA set, TC with an empty answer when the
// response exceeds the client's UDP size (512 without EDNS).
//
// TTL scale (0 < scale <= 1, default 1): every TTL served, and the SOA minimum, is the
// entry's TTL x scale rounded to the nearest second (at least 1). What is drawn (names,
// types, rdata, the TTL before scaling) does not change. A compressed clock for `sim
// validate --minute-seconds`: a run whose simulated minute lasts scale x 60 real seconds
// sees every entry live for the same share of a minute.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dns/message.hpp"
#include "sim/workload/entry_generator.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::traffic {

// What a response said, for the counters.
struct ResponseInfo {
  std::uint16_t rcode = 0;  // extended rcode (16 = BADVERS)
  bool nodata = false;      // NOERROR with an empty answer
  bool truncated = false;
  bool ecs_scoped = false;  // carried an ECS option with a non-zero scope
};

class UpstreamZone {
public:
  // Throws std::invalid_argument for a bad zone name, a profile whose names do not fit, or
  // a TTL scale outside (0, 1].
  UpstreamZone(const TrafficProfile& profile, std::uint64_t seed, std::string_view zone_text, double ttl_scale = 1.0);

  // Response to a parsed query. Over UDP the response is truncated (TC) beyond the
  // client's EDNS payload size (512 without EDNS); over TCP beyond 65535 bytes.
  ResponseInfo respond(const dns::Message& query, bool udp, Bytes& out) const;
  // Header-only (plus question when known) response with `rcode`, for unparsable queries.
  static void error_response(const dns::Message& query, std::uint16_t rcode, Bytes& out);

  // Index of a zone-relative lowercase wire name (labels + root byte), if generated.
  std::optional<std::uint64_t> find_relative(std::span<const std::uint8_t> relative_wire) const;
  // Name i in wire form (lowercase, zone appended) and in text form.
  Bytes name_wire(std::uint64_t i) const;
  std::string name_text(std::uint64_t i) const;
  // Entry i as generated (type, traits, base rdata).
  GeneratedEntry entry(std::uint64_t i) const { return gen_.generate(i); }

  const Bytes& zone_wire() const { return zone_; }
  std::uint64_t size() const { return names_; }
  const TrafficProfile& profile() const { return profile_; }
  // A TTL as served: `ttl` x the TTL scale, rounded, at least 1 (`ttl` itself at scale 1).
  std::uint32_t served_ttl(std::uint32_t ttl) const;

private:
  void write_soa(Bytes& out, std::size_t zone_offset, std::uint32_t ttl) const;
  void vary_for_subnet(std::uint64_t i, const dns::EcsOption& ecs, std::uint8_t scope, std::uint16_t type,
                       std::vector<Bytes>& rdatas) const;

  TrafficProfile profile_;
  std::uint64_t seed_;
  double ttl_scale_;
  EntryGenerator gen_;
  Bytes zone_;  // lowercase wire form
  std::uint64_t names_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> index_;  // (hash, i), sorted
};

// Text form of upstream name i ("abc.defgh.zone."), without building a zone index.
std::string upstream_name(const TrafficProfile& profile, std::uint64_t seed, std::uint64_t i,
                          std::string_view zone = "zone.");
// The query type name i is meant to be asked with (the type of its records).
std::uint16_t upstream_type(const TrafficProfile& profile, std::uint64_t seed, std::uint64_t i);

}  // namespace dnsarena::sim::traffic

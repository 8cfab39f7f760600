// SPDX-License-Identifier: GPL-3.0-or-later
// What a dnstap capture says per name: the tally the profile fit (profile_fit.hpp) reads.
//
// Fed one TapMessage at a time (dnstap_reader.hpp), in any order: several per-worker files
// are merged by tallying them one after the other, since nothing here depends on the order
// of messages across files except "first seen", which is decided by the messages' times.
//
//   CLIENT_QUERY        popularity (queries per name and type bucket), the time span and
//                       queries per hour, ECS options (client subnets) of the clients
//   CLIENT_RESPONSE     the outcome per name and type (positive, NODATA, NXDOMAIN and its
//                       SOA minimum), ECS scopes, and the answer's shape when no upstream
//   FORWARDER_RESPONSE  response for the name was captured: records, rdata sizes, CNAME,
//                       and the TTL as the authority gave it (before the cache counts it down)
//   FORWARDER_QUERY     counted only
// Names are keyed in lowercase wire form (serve randomises the case of upstream queries).
//
// Memory: one NameTally and its key in a hash node, about 200 bytes per distinct name; a day of a busy
// resolver's distinct names (tens of millions) needs gigabytes; sample the capture first.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/fit/dnstap_reader.hpp"

namespace dnsarena::sim::fit {

// Query types as the profile groups them.
enum TypeBucket : std::uint8_t { kBucketA = 0, kBucketAaaa = 1, kBucketOther = 2 };
TypeBucket type_bucket(std::uint16_t qtype);

// The first answer seen for a name with records of the type asked.
struct AnswerShape {
  std::uint64_t time_ns = ~0ull;
  bool from_upstream = false;  // FORWARDER_RESPONSE (else CLIENT_RESPONSE)
  TypeBucket bucket = kBucketA;
  std::uint8_t records = 0;        // records of the type asked (after a CNAME)
  bool cname = false;              // the answer starts with "name CNAME target"
  std::uint32_t ttl = 0;           // smallest TTL of the answer's records
  std::vector<std::uint16_t> rdata_bytes;  // per record of the type asked
};

struct NameTally {
  std::uint64_t queries = 0;                 // CLIENT_QUERY
  std::array<std::uint64_t, 3> by_bucket{};  // queries per TypeBucket
  std::uint8_t positive_buckets = 0;         // bit per TypeBucket answered with records
  std::uint8_t nodata_buckets = 0;           // bit per TypeBucket answered NODATA
  bool nxdomain = false;
  std::uint32_t soa_minimum = 0;             // of the first negative answer, 0: none
  bool ecs_asked = false;                    // some query carried an ECS option
  bool ecs_scoped = false;                   // some answer carried an ECS scope > 0
  AnswerShape shape;                         // valid when shape.records > 0
};

struct HourTally {
  std::uint64_t queries = 0;
  std::uint64_t first_ns = ~0ull, last_ns = 0;
};

struct TapTally {
  std::unordered_map<std::string, NameTally> names;  // lowercase wire name -> tally
  std::uint64_t client_queries = 0, client_responses = 0, forwarder_queries = 0, forwarder_responses = 0;
  std::uint64_t unparsable = 0;                      // messages dns::parse_message refused
  std::uint64_t first_query_ns = ~0ull, last_query_ns = 0;
  std::map<std::uint64_t, HourTally> hours;          // hours since the epoch (UTC)
  std::uint64_t ecs_queries = 0;                     // client queries with an ECS option
  std::map<std::string, std::uint64_t> ecs_subnets;  // family/prefix/address -> queries
  std::map<std::uint8_t, std::uint64_t> ecs_scopes_v4, ecs_scopes_v6;  // answer scope -> answers

  void add(const TapMessage& m);
};

}  // namespace dnsarena::sim::fit

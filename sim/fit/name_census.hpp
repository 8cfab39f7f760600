// SPDX-License-Identifier: GPL-3.0-or-later
// The queried names of a capture sorted into the classes of profile_fit.hpp (positive,
// negative, stray, unanswered, outside the zone), with what each class gives the profile's
// fields: query counts for popularity, own types, stray queries, answer shapes, name shapes.
//
// One pass over the tally's names (tap_tally.hpp); the zone and its SOA minimum come first,
// from two passes of their own (zone_of_names, zone_soa_minimum).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/fit/tap_tally.hpp"

namespace dnsarena::sim::fit {

// Smallest and largest of the values added; empty until one is.
struct ValueRange {
  unsigned min = ~0u, max = 0;
  void add(unsigned v) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  bool empty() const { return min > max; }
};

struct NameCensus {
  std::uint64_t positive = 0, negative = 0, stray = 0, unanswered = 0, outside_zone = 0;
  std::uint64_t stray_nodata_queries = 0, stray_nxdomain_queries = 0;
  double hidden_positive = 0;          // positive names expected among the NODATA-only ones
  std::vector<std::uint64_t> counts;   // queries per list name (positive, negative, unanswered)
  std::array<double, 3> own_type_names{};     // list names per own TypeBucket
  std::array<double, 3> own_type_queries{};   // list-name queries that are not stray, per bucket
  std::uint64_t two_type_names = 0;    // positive names answering two type buckets
  std::uint64_t shaped = 0, cname = 0, ttl_from_upstream = 0;  // positive names with an answer shape
  std::uint64_t ecs_asked = 0, ecs_scoped = 0;                 // positive names asked with ECS / scoped
  std::vector<std::uint32_t> ttls;             // first-seen TTL per shaped name
  std::vector<std::uint32_t> negative_minima;  // SOA minimum per negative name
  ValueRange records, other_rdata, labels, label_bytes;
};

// Lowercase wire form of the zone: `zone_text` when given, else the longest label suffix
// every queried name shares (the root when there is none).
std::string zone_of_names(const TapTally& tally, const std::string& zone_text);

// The SOA minimum most names answering only NXDOMAIN carry, when at least a quarter of them
// (and two or more) do; else 0.
std::uint32_t zone_soa_minimum(const TapTally& tally);

NameCensus take_census(const TapTally& tally, const std::string& zone_wire, std::uint32_t zone_soa_minimum);

}  // namespace dnsarena::sim::fit

// SPDX-License-Identifier: GPL-3.0-or-later
// Fitting a traffic profile (sim/workload/traffic_profile.hpp) to a dnstap capture's tally
// (tap_tally.hpp): every field of the schema, and what the schema cannot hold (queries per
// hour) beside it.
//
// Names (name_census.hpp). A queried name is put in one of four classes, from its answers:
//   positive   some answer had records of the type asked: a name of the list
//   negative   only NXDOMAIN / NODATA answers, not a stray: a name of the list that
//              answers negatively (profile: negative.share)
//   stray      NXDOMAIN whose SOA minimum is the zone's (below): a name outside the list
//              (profile: stray.nxdomain_share, a share of queries)
//   unanswered no answer captured: a name of the list whose outcome is unknown
// The zone's SOA minimum is the one most NXDOMAIN names carry, when at least a quarter of
// them do. On a real zone every NXDOMAIN carries it, so every NXDOMAIN is a stray and the
// negative names are those answering NODATA to every type; the synthetic upstream gives
// its negative names SOA minima of their own TTL, so they are told apart from its strays.
// A name's own type is its positive type (the most asked, if several), for the others its
// most asked type; queries of a list name for another type count as stray NODATA.
// A positive name asked only for types it does not have cannot be told from a negative
// one; how many there are is expected from the stray NODATA share q and the positive names
// seen k times (P_k q^k / (1 - q^k) of them), and moved from negative to positive (their
// queries to stray NODATA) in the counts: hidden_positive_names.
//
// Where each field comes from (docs/simulator.md, "Fitting a profile to a dnstap capture"):
//   names, zipf   query counts of the list names (zipf_fit.hpp: censored MLE; universe)
//   qps           client queries / seconds from the first to the last
//   qtypes        own types of the list names, one per name (per_name: true) when at most
//                 1% of positive names answer two type groups; else the query mix
//   records, other_rdata_bytes, ttl, cname   first answer per positive name, an upstream
//                 response when captured (the TTL before the cache counted it down)
//   labels, label_bytes   list names without the zone (the names' common suffix, or --zone)
//   negative      share of list names with an outcome; ttl: the zone's SOA minimum
//   stray         shares of all client queries
//   ecs           share: positive names answered with an ECS scope > 0, of the positive
//                 names asked with an ECS option (0 when clients sent none); subnets:
//                 distinct client subnets; prefix and prefix_v6: the most frequent scope of
//                 IPv4 / IPv6 answers
// A field the capture says nothing about keeps the schema's default, and `notes` says so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fit/tap_tally.hpp"
#include "sim/fit/zipf_fit.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim::fit {

struct FitOptions {
  std::string zone;  // text ("example.com."); empty: the common suffix of the queried names
};

struct HourRate {
  std::uint64_t hour = 0;  // hours since the epoch, UTC
  std::uint64_t queries = 0;
  double qps = 0;          // queries / seconds of the capture inside that hour
};

struct ProfileFit {
  TrafficProfile profile;
  ZipfFit zipf;
  std::string zone;
  std::uint64_t positive_names = 0, negative_names = 0, stray_names = 0, unanswered_names = 0, outside_zone_names = 0;
  std::uint64_t client_queries = 0, stray_nodata_queries = 0, stray_nxdomain_queries = 0;
  double hidden_positive_names = 0;  // positive names expected among the NODATA-only ones
  std::uint32_t zone_soa_minimum = 0;  // 0: no NXDOMAIN minimum shared by a quarter of the NXDOMAIN names
  double capture_s = 0;
  std::vector<HourRate> hours;
  std::uint64_t ttl_samples = 0, ttl_from_upstream = 0;
  double ttl_ks = 0;  // Kolmogorov-Smirnov distance of the TTLs to the uniform range
  std::uint64_t ecs_subnets_seen = 0;
  double ecs_subnets_chao1 = 0;
  bool two_type_names = false;  // more than 1% of positive names answer two type groups
  std::vector<std::string> notes;

  nlohmann::json to_json() const;
  std::string report() const;  // the human table
};

ProfileFit fit_profile(const TapTally& tally, const FitOptions& options = {});

// TTLs (one per name) as the schema's distribution: the uniform range min..max when they
// look uniform (more than 32 distinct values and a Kolmogorov-Smirnov distance below
// 1.63 / sqrt(n), the 1% level), else up to 32 buckets: one per value when there are at
// most 32 values, else 32 equal-count slices each at its median. `ks` gets the distance.
TtlDistribution fit_ttl(std::vector<std::uint32_t> ttls, double* ks = nullptr);

}  // namespace dnsarena::sim::fit

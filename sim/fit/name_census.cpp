// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/name_census.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "wire/dns_name.hpp"

namespace dnsarena::sim::fit {

namespace {

constexpr double kZoneMinimumQuorum = 0.25;  // share of NXDOMAIN names holding the zone's minimum

// Label offsets of a wire name (the root not included).
std::vector<std::size_t> label_offsets(const std::string& wire) {
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p < wire.size() && wire[p] != 0; p += static_cast<std::uint8_t>(wire[p]) + 1u) out.push_back(p);
  return out;
}

// True when `suffix` (wire, with the root) is `name` or ends it at a label boundary.
bool has_label_suffix(const std::string& name, const std::string& suffix) {
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  const std::size_t at = name.size() - suffix.size();
  if (at == 0 || at + 1 == name.size()) return true;  // the name itself, or the root
  const auto offsets = label_offsets(name);
  return std::find(offsets.begin(), offsets.end(), at) != offsets.end();
}

// The bucket a name is asked for when it is not a stray: its most asked positive bucket,
// or (no positive answer) its most asked bucket.
int own_bucket(const NameTally& n) {
  int own = -1;
  for (int b = 0; b < 3; ++b) {
    const bool eligible = n.positive_buckets == 0 || (n.positive_buckets & (1u << b));
    if (eligible && (own < 0 || n.by_bucket[b] > n.by_bucket[own])) own = b;
  }
  return own;
}

void add_name_shape(NameCensus& c, const std::string& name, std::size_t zone_labels) {
  const auto offsets = label_offsets(name);
  const std::size_t labels = offsets.size() - zone_labels;
  if (labels == 0) return;  // the apex
  c.labels.add(static_cast<unsigned>(labels));
  for (std::size_t i = 0; i < labels; ++i) c.label_bytes.add(static_cast<std::uint8_t>(name[offsets[i]]));
}

void add_answer_shape(NameCensus& c, const AnswerShape& s) {
  if (s.records == 0) return;
  ++c.shaped;
  c.records.add(s.records);
  if (s.cname) ++c.cname;
  c.ttls.push_back(s.ttl);
  if (s.from_upstream) ++c.ttl_from_upstream;
  if (s.bucket == kBucketOther)
    for (std::uint16_t b : s.rdata_bytes) c.other_rdata.add(std::clamp<unsigned>(b, 1, 4000));
}

// A name of the list asked only for types it does not have looks negative (NODATA only).
// With q the share of list-name queries that are stray NODATA, a positive name asked k
// times is hidden so with probability q^k: for the P_k positive names seen with k queries,
// P_k q^k / (1 - q^k) more are hidden among the NODATA-only names. Moves them back.
void count_hidden_positive(NameCensus& c, const std::map<std::uint64_t, std::uint64_t>& positive_by_queries,
                           std::uint64_t list_queries, std::uint64_t nodata_only) {
  if (list_queries == 0 || c.stray_nodata_queries == 0) return;
  const double q = static_cast<double>(c.stray_nodata_queries) / static_cast<double>(list_queries);
  double hidden = 0, hidden_queries = 0;
  for (const auto& [k, names] : positive_by_queries) {
    const double qk = std::pow(q, static_cast<double>(k));
    if (qk < 1e-9 || qk >= 1) continue;
    hidden += static_cast<double>(names) * qk / (1 - qk);
    hidden_queries += static_cast<double>(names * k) * qk / (1 - qk);
  }
  if (hidden <= 0) return;
  c.hidden_positive = std::min(static_cast<double>(nodata_only), hidden);
  const auto moved = static_cast<std::uint64_t>(std::llround(c.hidden_positive));
  c.negative -= moved;
  c.positive += moved;
  c.stray_nodata_queries += static_cast<std::uint64_t>(std::llround(hidden_queries * c.hidden_positive / hidden));
}

}  // namespace

std::string zone_of_names(const TapTally& t, const std::string& zone_text) {
  if (!zone_text.empty()) {
    const auto w = wire::name_to_wire(zone_text);
    std::string zone(w.begin(), w.end());
    for (char& ch : zone) ch = static_cast<char>(wire::ascii_lower(static_cast<std::uint8_t>(ch)));
    return zone;
  }
  std::string suffix;
  bool first = true;
  for (const auto& [name, n] : t.names) {
    if (n.queries == 0) continue;
    if (first) suffix = name, first = false;
    while (suffix.size() > 1 && !has_label_suffix(name, suffix)) suffix.erase(0, static_cast<std::uint8_t>(suffix[0]) + 1u);
  }
  return first ? std::string(1, '\0') : suffix;
}

std::uint32_t zone_soa_minimum(const TapTally& t) {
  std::map<std::uint32_t, std::uint64_t> minima;
  std::uint64_t nx_names = 0;
  for (const auto& [name, n] : t.names)
    if (n.queries > 0 && n.positive_buckets == 0 && n.nxdomain && n.soa_minimum > 0) ++minima[n.soa_minimum], ++nx_names;
  std::uint32_t best = 0;
  std::uint64_t count = 0;
  for (const auto& [minimum, names] : minima)
    if (names > count) best = minimum, count = names;
  const bool quorum = count >= 2 && static_cast<double>(count) >= kZoneMinimumQuorum * static_cast<double>(nx_names);
  return quorum ? best : 0;
}

NameCensus take_census(const TapTally& t, const std::string& zone, std::uint32_t zone_minimum) {
  NameCensus c;
  const std::size_t zone_labels = label_offsets(zone).size();
  std::map<std::uint64_t, std::uint64_t> positive_by_queries;  // queries -> positive names
  std::uint64_t list_queries = 0, nodata_only = 0;
  for (const auto& [name, n] : t.names) {
    if (n.queries == 0) continue;  // seen only in responses: no popularity, no class
    if (name.size() <= zone.size() || !has_label_suffix(name, zone)) {
      ++c.outside_zone;
      continue;
    }
    const bool positive = n.positive_buckets != 0;
    const bool negative = !positive && (n.nxdomain || n.nodata_buckets != 0);
    if (negative && n.nxdomain && zone_minimum != 0 && n.soa_minimum == zone_minimum) {
      ++c.stray;
      c.stray_nxdomain_queries += n.queries;
      continue;
    }
    c.counts.push_back(n.queries);
    list_queries += n.queries;
    const int own = own_bucket(n);
    c.own_type_names[own] += 1;
    for (int b = 0; b < 3; ++b) {
      const bool stray = positive ? !(n.positive_buckets & (1u << b)) : b != own;
      if (stray) c.stray_nodata_queries += n.by_bucket[b];
      else c.own_type_queries[b] += static_cast<double>(n.by_bucket[b]);
    }
    add_name_shape(c, name, zone_labels);
    if (negative) {
      ++c.negative;
      if (!n.nxdomain) ++nodata_only;
      if (n.soa_minimum > 0) c.negative_minima.push_back(n.soa_minimum);
    } else if (!positive) {
      ++c.unanswered;
    } else {
      ++c.positive;
      ++positive_by_queries[n.queries];
      if (__builtin_popcount(n.positive_buckets) > 1) ++c.two_type_names;
      if (n.ecs_asked) ++c.ecs_asked, c.ecs_scoped += n.ecs_scoped;
      add_answer_shape(c, n.shape);
    }
  }
  count_hidden_positive(c, positive_by_queries, list_queries, nodata_only);
  return c;
}

}  // namespace dnsarena::sim::fit

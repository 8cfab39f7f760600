// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/profile_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/fit/name_census.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::fit {

namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kTwoTypeNamesShare = 0.01;  // above: qtypes.per_name false
constexpr std::uint32_t kMaxEcsSubnets = 65536;  // the schema's bound

// Shares as written to the profile: six decimals.
double round_share(double v) { return std::round(v * 1e6) / 1e6; }

double share_of(std::uint64_t part, std::uint64_t whole) {
  return whole > 0 ? round_share(static_cast<double>(part) / static_cast<double>(whole)) : 0;
}

template <class T>
T most_frequent(const std::map<T, std::uint64_t>& m, T fallback) {
  T best = fallback;
  std::uint64_t count = 0;
  for (const auto& [k, c] : m)
    if (c > count) best = k, count = c;
  return best;
}

void fit_popularity_and_rate(const TapTally& t, const NameCensus& c, ProfileFit& f) {
  TrafficProfile& p = f.profile;
  f.zipf = fit_zipf(c.counts);
  if (!c.counts.empty()) {
    p.names = std::max<std::uint64_t>(f.zipf.universe, 1);
    p.zipf = std::clamp(f.zipf.exponent, 0.0, 3.0);
  } else {
    f.notes.push_back("names, zipf: no queried names under the zone; defaults kept");
  }
  if (t.last_query_ns > t.first_query_ns) {
    f.capture_s = static_cast<double>(t.last_query_ns - t.first_query_ns) / kNsPerSecond;
    p.qps = std::max(1e-3, static_cast<double>(t.client_queries) / f.capture_s);
  } else {
    f.notes.push_back("qps: the capture spans no time; default kept");
  }
  for (const auto& [hour, h] : t.hours) {
    const double seconds = std::max(1.0, static_cast<double>(h.last_ns - h.first_ns) / kNsPerSecond);
    f.hours.push_back({hour, h.queries, static_cast<double>(h.queries) / seconds});
  }
}

void fit_qtypes(const NameCensus& c, ProfileFit& f) {
  TrafficProfile& p = f.profile;
  f.two_type_names = c.positive > 0 && static_cast<double>(c.two_type_names) > kTwoTypeNamesShare * static_cast<double>(c.positive);
  const std::array<double, 3>& mix = f.two_type_names ? c.own_type_queries : c.own_type_names;
  const double total = mix[0] + mix[1] + mix[2];
  if (total <= 0) {
    f.notes.push_back("qtypes: no list names; defaults kept");
    return;
  }
  p.qtype_per_name = !f.two_type_names;
  p.share_a = round_share(mix[kBucketA] / total);
  p.share_aaaa = round_share(mix[kBucketAaaa] / total);
  p.share_other = 1.0 - p.share_a - p.share_aaaa;
}

void fit_shapes(const NameCensus& c, ProfileFit& f) {
  TrafficProfile& p = f.profile;
  if (c.shaped > 0) {
    p.records_min = c.records.min, p.records_max = c.records.max;
    f.ttl_samples = c.ttls.size();
    f.ttl_from_upstream = c.ttl_from_upstream;
    p.ttl = fit_ttl(c.ttls, &f.ttl_ks);
    p.cname_share = share_of(c.cname, c.shaped);
  } else {
    f.notes.push_back("records, ttl, cname: no positive answers captured; defaults kept");
  }
  if (!c.other_rdata.empty()) p.other_rdata_min = c.other_rdata.min, p.other_rdata_max = c.other_rdata.max;
  else f.notes.push_back("other_rdata_bytes: no answers of other types than A/AAAA; default kept");
  if (c.labels.empty()) return;
  p.labels_min = c.labels.min, p.labels_max = c.labels.max;
  p.label_bytes_min = c.label_bytes.min, p.label_bytes_max = c.label_bytes.max;
  // The schema's bound: names with the zone and a "cdn." prefix must fit 255 bytes.
  const auto too_long = [&] { return p.labels_max * (p.label_bytes_max + 1) + 4 + 64 > 255; };
  while (too_long() && p.label_bytes_max > p.label_bytes_min) --p.label_bytes_max;
  while (too_long() && p.labels_max > p.labels_min) --p.labels_max;
  if (p.label_bytes_max != c.label_bytes.max || p.labels_max != c.labels.max)
    f.notes.push_back("labels, label_bytes: cut to the schema's bound labels.max * (label_bytes.max + 1) <= 187");
}

void fit_negative_and_strays(const TapTally& t, NameCensus& c, ProfileFit& f) {
  TrafficProfile& p = f.profile;
  p.negative_share = share_of(c.negative, c.positive + c.negative);
  if (f.zone_soa_minimum != 0) {
    p.negative_ttl = f.zone_soa_minimum;
  } else if (!c.negative_minima.empty()) {
    auto middle = c.negative_minima.begin() + static_cast<std::ptrdiff_t>(c.negative_minima.size() / 2);
    std::nth_element(c.negative_minima.begin(), middle, c.negative_minima.end());
    p.negative_ttl = *middle;
    f.notes.push_back("negative.ttl: no zone SOA minimum among NXDOMAIN names; the median SOA minimum of negative names");
  } else {
    f.notes.push_back("negative.ttl: no negative answers captured; default kept");
  }
  p.negative_ttl = std::clamp<std::uint32_t>(p.negative_ttl, 1, 7 * 86400);
  if (p.negative_share + p.cname_share > 1) p.cname_share = 1 - p.negative_share;
  p.stray_nodata_share = std::min(0.5, share_of(c.stray_nodata_queries, t.client_queries));
  p.stray_nxdomain_share = std::min(0.5 - p.stray_nodata_share, share_of(c.stray_nxdomain_queries, t.client_queries));
}

void fit_ecs(const TapTally& t, const NameCensus& c, ProfileFit& f) {
  TrafficProfile& p = f.profile;
  f.ecs_subnets_seen = t.ecs_subnets.size();
  std::uint64_t once = 0, twice = 0;
  for (const auto& [subnet, queries] : t.ecs_subnets) once += queries == 1, twice += queries == 2;
  f.ecs_subnets_chao1 = chao1(f.ecs_subnets_seen, once, twice);
  if (t.ecs_queries == 0) {
    p.ecs_share = 0;
    p.ecs_subnets = 0;
  } else {
    p.ecs_subnets = static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxEcsSubnets, f.ecs_subnets_seen));
    if (f.ecs_subnets_seen > kMaxEcsSubnets) f.notes.push_back("ecs.subnets: more client subnets than the schema's 65,536; capped");
    p.ecs_share = share_of(c.ecs_scoped, c.ecs_asked);
    if (c.ecs_scoped == 0)
      f.notes.push_back("ecs.share: clients sent ECS but no answer carried a scope (does the resolver forward ECS?)");
  }
  p.ecs_prefix = std::clamp<std::uint8_t>(most_frequent<std::uint8_t>(t.ecs_scopes_v4, p.ecs_prefix), 1, 32);
  p.ecs_prefix_v6 = std::clamp<std::uint8_t>(most_frequent<std::uint8_t>(t.ecs_scopes_v6, p.ecs_prefix_v6), 1, 128);
  if (t.ecs_scopes_v6.empty()) f.notes.push_back("ecs.prefix_v6: no IPv6 scoped answers; default kept");
}

}  // namespace

TtlDistribution fit_ttl(std::vector<std::uint32_t> ttls, double* ks_out) {
  if (ttls.empty()) return TtlDistribution{};
  std::sort(ttls.begin(), ttls.end());
  for (auto& t : ttls) t = std::max<std::uint32_t>(1, t);
  const std::uint32_t lo = ttls.front(), hi = ttls.back();
  const double n = static_cast<double>(ttls.size());
  std::vector<std::pair<std::uint32_t, std::uint64_t>> values;  // distinct value, count
  for (std::uint32_t t : ttls) {
    if (values.empty() || values.back().first != t) values.emplace_back(t, 0);
    ++values.back().second;
  }
  // Kolmogorov-Smirnov distance to the uniform integers lo..hi.
  double ks = 0, below = 0;
  const double span = static_cast<double>(hi - lo) + 1;
  for (const auto& [v, c] : values) {
    const double f_before = below / n, f_after = (below + static_cast<double>(c)) / n;
    const double u_before = static_cast<double>(v - lo) / span, u_after = static_cast<double>(v - lo + 1) / span;
    ks = std::max({ks, std::fabs(f_before - u_before), std::fabs(f_after - u_after)});
    below += static_cast<double>(c);
  }
  if (ks_out) *ks_out = ks;
  if (values.size() > TtlDistribution::kUniformTtlBuckets && ks < 1.63 / std::sqrt(n))
    return TtlDistribution::range(lo, hi);
  std::vector<TtlBucket> buckets;
  if (values.size() <= TtlDistribution::kUniformTtlBuckets) {
    for (const auto& [v, c] : values) buckets.push_back({v, static_cast<double>(c) / n});
  } else {
    const std::size_t slices = TtlDistribution::kUniformTtlBuckets;
    for (std::size_t i = 0; i < slices; ++i) {
      const std::size_t a = i * ttls.size() / slices, b = (i + 1) * ttls.size() / slices;
      if (a == b) continue;
      const std::uint32_t median = ttls[(a + b - 1) / 2];
      const double share = static_cast<double>(b - a) / n;
      if (!buckets.empty() && buckets.back().seconds == median) buckets.back().share += share;
      else buckets.push_back({median, share});
    }
  }
  // Shares rounded for the file, the last one taking the rest so that they sum to 1.
  double sum = 0;
  for (std::size_t i = 0; i + 1 < buckets.size(); ++i) sum += buckets[i].share = round_share(buckets[i].share);
  buckets.back().share = 1.0 - sum;
  return TtlDistribution::from_buckets(std::move(buckets));
}

ProfileFit fit_profile(const TapTally& t, const FitOptions& options) {
  ProfileFit f;
  f.client_queries = t.client_queries;
  const std::string zone = zone_of_names(t, options.zone);
  f.zone = wire::wire_to_text(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(zone.data()), zone.size()));
  f.zone_soa_minimum = zone_soa_minimum(t);
  NameCensus c = take_census(t, zone, f.zone_soa_minimum);
  f.positive_names = c.positive, f.negative_names = c.negative, f.stray_names = c.stray;
  f.unanswered_names = c.unanswered, f.outside_zone_names = c.outside_zone;
  f.stray_nodata_queries = c.stray_nodata_queries, f.stray_nxdomain_queries = c.stray_nxdomain_queries;
  f.hidden_positive_names = c.hidden_positive;
  fit_popularity_and_rate(t, c, f);
  fit_qtypes(c, f);
  fit_shapes(c, f);
  fit_negative_and_strays(t, c, f);
  fit_ecs(t, c, f);
  return f;
}

}  // namespace dnsarena::sim::fit

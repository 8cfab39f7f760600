// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/profile_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "wire/dns_name.hpp"

namespace dnsarena::sim::fit {

namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kTwoTypeNamesShare = 0.01;   // above: qtypes.per_name false
constexpr double kZoneMinimumQuorum = 0.25;   // share of NXDOMAIN names holding the zone's minimum

// Label offsets of a wire name (without the root).
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

// The longest label suffix all `names` share (wire form, with the root).
std::string common_suffix(const std::vector<const std::string*>& names) {
  if (names.empty()) return std::string(1, '\0');
  std::string suffix = *names.front();
  for (const std::string* n : names)
    while (suffix.size() > 1 && !has_label_suffix(*n, suffix)) suffix.erase(0, static_cast<std::uint8_t>(suffix[0]) + 1u);
  return suffix;
}

double round_share(double v) { return std::round(v * 1e6) / 1e6; }

template <class T>
T mode_of(const std::map<T, std::uint64_t>& m, T fallback) {
  T best = fallback;
  std::uint64_t count = 0;
  for (const auto& [k, c] : m)
    if (c > count) best = k, count = c;
  return best;
}

std::string hour_text(std::uint64_t hour) {
  const std::time_t t = static_cast<std::time_t>(hour * 3600);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:00Z", &tm);
  return buf;
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
  TrafficProfile& p = f.profile;
  f.client_queries = t.client_queries;

  // The zone.
  std::vector<const std::string*> queried;
  for (const auto& [name, n] : t.names)
    if (n.queries > 0) queried.push_back(&name);
  std::string zone;
  if (!options.zone.empty()) {
    const auto w = wire::name_to_wire(options.zone);
    zone.assign(w.begin(), w.end());
    for (char& c : zone) c = static_cast<char>(wire::ascii_lower(static_cast<std::uint8_t>(c)));
  } else {
    zone = common_suffix(queried);
  }
  f.zone = wire::wire_to_text(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(zone.data()), zone.size()));
  const std::size_t zone_labels = label_offsets(zone).size();
  const auto under_zone = [&](const std::string& name) { return name.size() > zone.size() && has_label_suffix(name, zone); };

  // The zone's SOA minimum: the one most NXDOMAIN-only names carry.
  std::map<std::uint32_t, std::uint64_t> nx_minima;
  std::uint64_t nx_names = 0;
  for (const std::string* name : queried) {
    const NameTally& n = t.names.at(*name);
    if (n.positive_buckets == 0 && n.nxdomain && n.soa_minimum > 0) ++nx_minima[n.soa_minimum], ++nx_names;
  }
  const std::uint32_t modal = mode_of<std::uint32_t>(nx_minima, 0);
  if (modal != 0 && nx_minima[modal] >= 2 && static_cast<double>(nx_minima[modal]) >= kZoneMinimumQuorum * static_cast<double>(nx_names))
    f.zone_soa_minimum = modal;

  // Classes, own types, stray queries.
  std::vector<std::uint64_t> counts;
  std::array<double, 3> own_names{}, list_queries{};
  std::uint64_t two_types = 0, cname_names = 0, ecs_names = 0, ecs_asked_names = 0, shaped_names = 0;
  std::vector<std::uint32_t> ttls, negative_minima;
  std::map<std::uint64_t, std::uint64_t> positive_by_queries;  // queries -> positive names
  std::uint64_t nodata_only_names = 0, list_name_queries = 0;
  bool have_other_rdata = false, have_records = false;
  unsigned rec_min = 16, rec_max = 1, rd_min = 4000, rd_max = 1, lab_min = 32, lab_max = 1, lb_min = 63, lb_max = 1;
  for (const std::string* name : queried) {
    const NameTally& n = t.names.at(*name);
    if (!under_zone(*name)) {
      ++f.outside_zone_names;
      continue;
    }
    const bool positive = n.positive_buckets != 0;
    const bool negative = !positive && (n.nxdomain || n.nodata_buckets != 0);
    if (negative && n.nxdomain && f.zone_soa_minimum != 0 && n.soa_minimum == f.zone_soa_minimum) {
      ++f.stray_names;
      f.stray_nxdomain_queries += n.queries;
      continue;
    }
    counts.push_back(n.queries);
    list_name_queries += n.queries;
    // Own type: the positive bucket most asked, else the bucket most asked.
    int own = -1;
    for (int b = 0; b < 3; ++b) {
      const bool eligible = !positive || (n.positive_buckets & (1u << b));
      if (eligible && (own < 0 || n.by_bucket[b] > n.by_bucket[own])) own = b;
    }
    own_names[own] += 1;
    for (int b = 0; b < 3; ++b) {
      const bool stray = positive ? !(n.positive_buckets & (1u << b)) : b != own;
      if (stray) f.stray_nodata_queries += n.by_bucket[b];
      else list_queries[b] += static_cast<double>(n.by_bucket[b]);
    }
    // Name shape.
    const auto offs = label_offsets(*name);
    const std::size_t labels = offs.size() - zone_labels;
    if (labels > 0) {
      lab_min = std::min<unsigned>(lab_min, static_cast<unsigned>(labels));
      lab_max = std::max<unsigned>(lab_max, static_cast<unsigned>(labels));
      for (std::size_t i = 0; i < labels; ++i) {
        const unsigned len = static_cast<std::uint8_t>((*name)[offs[i]]);
        lb_min = std::min(lb_min, len), lb_max = std::max(lb_max, len);
      }
    }
    if (negative) {
      ++f.negative_names;
      if (!n.nxdomain) ++nodata_only_names;
      if (n.soa_minimum > 0) negative_minima.push_back(n.soa_minimum);
      continue;
    }
    if (!positive) {
      ++f.unanswered_names;
      continue;
    }
    ++f.positive_names;
    ++positive_by_queries[n.queries];
    if (__builtin_popcount(n.positive_buckets) > 1) ++two_types;
    if (n.ecs_asked) ++ecs_asked_names;
    if (n.ecs_asked && n.ecs_scoped) ++ecs_names;
    const AnswerShape& s = n.shape;
    if (s.records == 0) continue;
    have_records = true;
    ++shaped_names;
    rec_min = std::min<unsigned>(rec_min, s.records), rec_max = std::max<unsigned>(rec_max, s.records);
    if (s.cname) ++cname_names;
    ttls.push_back(s.ttl);
    if (s.from_upstream) ++f.ttl_from_upstream;
    if (s.bucket == kBucketOther)
      for (std::uint16_t b : s.rdata_bytes) {
        have_other_rdata = true;
        rd_min = std::min<unsigned>(rd_min, std::max<unsigned>(1, b)), rd_max = std::max<unsigned>(rd_max, std::min<unsigned>(4000, b));
      }
  }

  // A name of the list asked only for types it does not have looks negative (NODATA
  // only). With q the share of list-name queries that are stray NODATA, a positive name
  // asked k times is hidden so with probability q^k: for every P_k positive names seen with
  // k queries, P_k q^k / (1 - q^k) more are hidden among the NODATA-only names.
  if (list_name_queries > 0 && f.stray_nodata_queries > 0) {
    const double q = static_cast<double>(f.stray_nodata_queries) / static_cast<double>(list_name_queries);
    double hidden = 0, hidden_queries = 0;
    for (const auto& [k, names] : positive_by_queries) {
      const double qk = std::pow(q, static_cast<double>(k));
      if (qk < 1e-9 || qk >= 1) continue;
      hidden += static_cast<double>(names) * qk / (1 - qk);
      hidden_queries += static_cast<double>(names * k) * qk / (1 - qk);
    }
    f.hidden_positive_names = std::min(static_cast<double>(nodata_only_names), hidden);
    f.negative_names -= static_cast<std::uint64_t>(std::llround(f.hidden_positive_names));
    f.positive_names += static_cast<std::uint64_t>(std::llround(f.hidden_positive_names));
    f.stray_nodata_queries += static_cast<std::uint64_t>(std::llround(hidden_queries * f.hidden_positive_names / std::max(hidden, 1e-9)));
  }

  // Popularity.
  f.zipf = fit_zipf(counts);
  if (!counts.empty()) {
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
    const double s = std::max(1.0, static_cast<double>(h.last_ns - h.first_ns) / kNsPerSecond);
    f.hours.push_back({hour, h.queries, static_cast<double>(h.queries) / s});
  }

  // Query types.
  const double listed = own_names[0] + own_names[1] + own_names[2];
  f.two_type_names = f.positive_names > 0 && static_cast<double>(two_types) > kTwoTypeNamesShare * static_cast<double>(f.positive_names);
  const std::array<double, 3>& mix = f.two_type_names ? list_queries : own_names;
  const double mix_total = mix[0] + mix[1] + mix[2];
  if (listed > 0 && mix_total > 0) {
    p.qtype_per_name = !f.two_type_names;
    p.share_a = round_share(mix[0] / mix_total);
    p.share_aaaa = round_share(mix[1] / mix_total);
    p.share_other = 1.0 - p.share_a - p.share_aaaa;
  } else {
    f.notes.push_back("qtypes: no list names; defaults kept");
  }

  // Answer shapes.
  if (have_records) {
    p.records_min = rec_min, p.records_max = rec_max;
    f.ttl_samples = ttls.size();
    p.ttl = fit_ttl(ttls, &f.ttl_ks);
  } else {
    f.notes.push_back("records, ttl: no positive answers captured; defaults kept");
  }
  if (have_other_rdata) p.other_rdata_min = rd_min, p.other_rdata_max = rd_max;
  else f.notes.push_back("other_rdata_bytes: no answers of other types than A/AAAA; default kept");
  if (lab_min <= lab_max) {
    p.labels_min = lab_min, p.labels_max = lab_max;
    p.label_bytes_min = lb_min, p.label_bytes_max = lb_max;
    // The schema's bound: names with the zone and a "cdn." prefix must fit 255 bytes.
    while (p.labels_max * (p.label_bytes_max + 1) + 4 + 64 > 255 && p.label_bytes_max > p.label_bytes_min) --p.label_bytes_max;
    while (p.labels_max * (p.label_bytes_max + 1) + 4 + 64 > 255 && p.labels_max > p.labels_min) --p.labels_max;
    if (p.label_bytes_max != lb_max || p.labels_max != lab_max)
      f.notes.push_back("labels, label_bytes: cut to the schema's bound labels.max * (label_bytes.max + 1) <= 187");
  }

  // Negative answers and strays.
  const double with_outcome = static_cast<double>(f.positive_names + f.negative_names);
  if (with_outcome > 0) p.negative_share = round_share(static_cast<double>(f.negative_names) / with_outcome);
  if (f.zone_soa_minimum != 0) {
    p.negative_ttl = f.zone_soa_minimum;
  } else if (!negative_minima.empty()) {
    std::nth_element(negative_minima.begin(), negative_minima.begin() + negative_minima.size() / 2, negative_minima.end());
    p.negative_ttl = negative_minima[negative_minima.size() / 2];
    f.notes.push_back("negative.ttl: no zone SOA minimum among NXDOMAIN names; the median SOA minimum of negative names");
  } else {
    f.notes.push_back("negative.ttl: no negative answers captured; default kept");
  }
  p.negative_ttl = std::clamp<std::uint32_t>(p.negative_ttl, 1, 7 * 86400);
  if (shaped_names > 0) p.cname_share = round_share(static_cast<double>(cname_names) / static_cast<double>(shaped_names));
  if (t.client_queries > 0) {
    const double q = static_cast<double>(t.client_queries);
    p.stray_nodata_share = std::min(0.5, round_share(static_cast<double>(f.stray_nodata_queries) / q));
    p.stray_nxdomain_share = std::min(0.5 - p.stray_nodata_share, round_share(static_cast<double>(f.stray_nxdomain_queries) / q));
  }

  // ECS.
  f.ecs_subnets_seen = t.ecs_subnets.size();
  {
    double f1 = 0, f2 = 0;
    for (const auto& [k, c] : t.ecs_subnets) f1 += c == 1, f2 += c == 2;
    f.ecs_subnets_chao1 = static_cast<double>(f.ecs_subnets_seen) + (f2 > 0 ? f1 * f1 / (2 * f2) : f1 * (f1 - 1) / 2);
  }
  if (t.ecs_queries > 0) {
    p.ecs_subnets = static_cast<std::uint32_t>(std::min<std::uint64_t>(65536, f.ecs_subnets_seen));
    if (f.ecs_subnets_seen > 65536) f.notes.push_back("ecs.subnets: more client subnets than the schema's 65,536; capped");
    p.ecs_share = ecs_asked_names > 0 ? round_share(static_cast<double>(ecs_names) / static_cast<double>(ecs_asked_names)) : 0;
    if (p.ecs_share > 0 && t.ecs_scopes_v4.empty() && t.ecs_scopes_v6.empty())
      f.notes.push_back("ecs: no scoped answers");
    if (ecs_names == 0)
      f.notes.push_back("ecs.share: clients sent ECS but no answer carried a scope (does the resolver forward ECS?)");
  } else {
    p.ecs_share = 0;
    p.ecs_subnets = 0;
  }
  p.ecs_prefix = std::clamp<std::uint8_t>(mode_of<std::uint8_t>(t.ecs_scopes_v4, p.ecs_prefix), 1, 32);
  p.ecs_prefix_v6 = std::clamp<std::uint8_t>(mode_of<std::uint8_t>(t.ecs_scopes_v6, p.ecs_prefix_v6), 1, 128);
  if (t.ecs_scopes_v6.empty()) f.notes.push_back("ecs.prefix_v6: no IPv6 scoped answers; default kept");
  if (p.negative_share + p.cname_share > 1) p.cname_share = 1 - p.negative_share;
  return f;
}

nlohmann::json ProfileFit::to_json() const {
  nlohmann::json hours_json = nlohmann::json::array();
  for (const HourRate& h : hours)
    hours_json.push_back({{"hour_utc", hour_text(h.hour)}, {"queries", h.queries}, {"qps", h.qps}});
  nlohmann::json ttl_json = nlohmann::json::array();
  for (const TtlBucket& b : profile.ttl.buckets) ttl_json.push_back({{"seconds", b.seconds}, {"share", b.share}});
  const TrafficProfile& p = profile;
  return {
      {"zone", zone},
      {"client_queries", client_queries},
      {"capture_s", capture_s},
      {"names", {{"positive", positive_names}, {"negative", negative_names}, {"stray", stray_names},
                 {"unanswered", unanswered_names}, {"outside_zone", outside_zone_names}}},
      {"zipf", {{"exponent", zipf.exponent}, {"universe", zipf.universe}, {"distinct", zipf.distinct},
                {"queries", zipf.queries}, {"head_ranks", zipf.head_ranks}, {"singletons", zipf.singletons},
                {"chao1", zipf.chao1}, {"iterations", zipf.iterations}}},
      {"profile",
       {{"names", p.names}, {"zipf", p.zipf}, {"qps", p.qps},
        {"qtypes", {{"a", p.share_a}, {"aaaa", p.share_aaaa}, {"other", p.share_other}, {"per_name", p.qtype_per_name}}},
        {"records", {{"min", p.records_min}, {"max", p.records_max}}},
        {"other_rdata_bytes", {{"min", p.other_rdata_min}, {"max", p.other_rdata_max}}},
        {"labels", {{"min", p.labels_min}, {"max", p.labels_max}}},
        {"label_bytes", {{"min", p.label_bytes_min}, {"max", p.label_bytes_max}}},
        {"ttl", p.ttl.uniform ? nlohmann::json{{"min", p.ttl.uniform_min}, {"max", p.ttl.uniform_max}} : ttl_json},
        {"negative", {{"share", p.negative_share}, {"ttl", p.negative_ttl}}},
        {"cname", {{"share", p.cname_share}}},
        {"stray", {{"nodata_share", p.stray_nodata_share}, {"nxdomain_share", p.stray_nxdomain_share}}},
        {"ecs", {{"share", p.ecs_share}, {"subnets", p.ecs_subnets}, {"prefix", p.ecs_prefix}, {"prefix_v6", p.ecs_prefix_v6}}}}},
      {"ttl_samples", ttl_samples},
      {"ttl_from_upstream", ttl_from_upstream},
      {"ttl_ks_distance", ttl_ks},
      {"zone_soa_minimum", zone_soa_minimum},
      {"stray_nodata_queries", stray_nodata_queries},
      {"hidden_positive_names", hidden_positive_names},
      {"stray_nxdomain_queries", stray_nxdomain_queries},
      {"ecs_subnets_seen", ecs_subnets_seen},
      {"ecs_subnets_chao1", ecs_subnets_chao1},
      {"rate_by_hour", hours_json},
      {"notes", notes},
  };
}

std::string ProfileFit::report() const {
  const TrafficProfile& p = profile;
  std::ostringstream o;
  char line[256];
  auto add = [&](const char* fmt, auto... v) {
    std::snprintf(line, sizeof line, fmt, v...);
    o << line;
  };
  add("zone %s: %llu client queries over %.1f s\n", zone.c_str(), static_cast<unsigned long long>(client_queries), capture_s);
  add("names: %llu positive, %llu negative, %llu stray (NXDOMAIN at the zone's SOA minimum %u), %llu unanswered, %llu outside the zone\n",
      static_cast<unsigned long long>(positive_names), static_cast<unsigned long long>(negative_names),
      static_cast<unsigned long long>(stray_names), zone_soa_minimum, static_cast<unsigned long long>(unanswered_names),
      static_cast<unsigned long long>(outside_zone_names));
  add("%-18s %-14s %s\n", "parameter", "fitted", "from");
  add("%-18s %-14llu %llu seen, %llu once; Zipf model E[distinct] = seen (Chao1 lower bound %.0f)\n", "names",
      static_cast<unsigned long long>(p.names), static_cast<unsigned long long>(zipf.distinct),
      static_cast<unsigned long long>(zipf.singletons), zipf.chao1);
  add("%-18s %-14.4f censored truncated-Zipf MLE, %llu head ranks (>= %llu queries), %llu queries\n", "zipf", p.zipf,
      static_cast<unsigned long long>(zipf.head_ranks), static_cast<unsigned long long>(kHeadMinCount),
      static_cast<unsigned long long>(zipf.queries));
  add("%-18s %-14.1f client queries / capture seconds\n", "qps", p.qps);
  add("%-18s %.4f/%.4f/%.4f %s\n", "qtypes a/aaaa/oth", p.share_a, p.share_aaaa, p.share_other,
      p.qtype_per_name ? "one type per name (per_name: true), share of names" : "names asked several types: query mix");
  add("%-18s %u..%-11u first answer per positive name\n", "records", p.records_min, p.records_max);
  add("%-18s %u..%-11u rdata of other types than A/AAAA\n", "other_rdata_bytes", p.other_rdata_min, p.other_rdata_max);
  add("%-18s %u..%-11u labels before the zone\n", "labels", p.labels_min, p.labels_max);
  add("%-18s %u..%-11u\n", "label_bytes", p.label_bytes_min, p.label_bytes_max);
  if (p.ttl.uniform)
    add("%-18s %u..%-11u uniform (KS distance %.4f), %llu names, %llu from upstream answers\n", "ttl", p.ttl.uniform_min,
        p.ttl.uniform_max, ttl_ks, static_cast<unsigned long long>(ttl_samples), static_cast<unsigned long long>(ttl_from_upstream));
  else
    add("%-18s %zu buckets    %u..%u s, %llu names, %llu from upstream answers\n", "ttl", p.ttl.buckets.size(), p.ttl.lowest(),
        p.ttl.highest(), static_cast<unsigned long long>(ttl_samples), static_cast<unsigned long long>(ttl_from_upstream));
  add("%-18s %-14.4f of names with an outcome (%.0f NODATA-only names counted positive); ttl %u\n", "negative",
      p.negative_share, hidden_positive_names, p.negative_ttl);
  add("%-18s %-14.4f of positive names\n", "cname", p.cname_share);
  add("%-18s %-14.4f of client queries (%llu)\n", "stray nodata", p.stray_nodata_share,
      static_cast<unsigned long long>(stray_nodata_queries));
  add("%-18s %-14.4f of client queries (%llu)\n", "stray nxdomain", p.stray_nxdomain_share,
      static_cast<unsigned long long>(stray_nxdomain_queries));
  add("%-18s %-14.4f subnets %u (Chao1 %.0f), prefix %u, prefix_v6 %u\n", "ecs", p.ecs_share, p.ecs_subnets,
      ecs_subnets_chao1, p.ecs_prefix, p.ecs_prefix_v6);
  o << "rate by hour (UTC; the profile has one qps):\n";
  for (const HourRate& h : hours)
    add("  %s %10llu queries %10.1f q/s\n", hour_text(h.hour).c_str(), static_cast<unsigned long long>(h.queries), h.qps);
  for (const std::string& n : notes) o << "note: " << n << '\n';
  return o.str();
}

}  // namespace dnsarena::sim::fit

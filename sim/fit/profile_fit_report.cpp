// SPDX-License-Identifier: GPL-3.0-or-later
// ProfileFit's two faces: the JSON document of `sim fit --json` and the human report.
#include <cstdio>
#include <ctime>
#include <sstream>

#include "sim/fit/profile_fit.hpp"

namespace dnsarena::sim::fit {

namespace {

std::string hour_text(std::uint64_t hour) {
  const auto t = static_cast<std::time_t>(hour * 3600);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:00Z", &tm);
  return buf;
}

}  // namespace

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

// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/workload/traffic_profile.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/yaml_reader.hpp"

namespace dnsarena::sim {

using common::ConfigError;
using common::MapReader;

TtlDistribution TtlDistribution::range(std::uint32_t lo, std::uint32_t hi) {
  TtlDistribution d;
  d.uniform = true;
  d.uniform_min = lo;
  d.uniform_max = hi;
  d.buckets = uniform_buckets(lo, hi);
  return d;
}

TtlDistribution TtlDistribution::from_buckets(std::vector<TtlBucket> b) {
  TtlDistribution d;
  d.uniform = false;
  d.uniform_min = d.uniform_max = 0;
  d.buckets = std::move(b);
  return d;
}

std::vector<TtlBucket> TtlDistribution::uniform_buckets(std::uint32_t lo, std::uint32_t hi) {
  if (hi < lo) std::swap(lo, hi);
  const std::uint32_t span = hi - lo + 1;  // integer TTLs lo..hi
  const unsigned count = std::max(1u, std::min(kUniformTtlBuckets, span));
  std::vector<TtlBucket> out;
  for (unsigned i = 0; i < count; ++i) {
    const double mid = lo + (static_cast<double>(i) + 0.5) * span / count - 0.5;
    out.push_back({std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(mid))), 1.0 / count});
  }
  return out;
}

std::uint32_t TtlDistribution::lowest() const {
  if (uniform) return uniform_min;
  std::uint32_t lo = ~0u;
  for (const TtlBucket& b : buckets) lo = std::min(lo, b.seconds);
  return lo;
}

std::uint32_t TtlDistribution::highest() const {
  if (uniform) return uniform_max;
  std::uint32_t hi = 0;
  for (const TtlBucket& b : buckets) hi = std::max(hi, b.seconds);
  return hi;
}

std::uint32_t TrafficProfile::stray_keys() const {
  const std::uint32_t keys = (stray_nodata_share > 0 ? 2 : 0) + (stray_nxdomain_share > 0 ? 3 : 0);
  return keys == 0 ? 1 : keys;
}

std::uint32_t TrafficProfile::max_ttl() const {
  std::uint32_t longest = negative_share > 0 || stray_share() > 0 ? negative_ttl : 0;
  for (const TtlBucket& b : ttl.buckets) longest = std::max(longest, b.seconds);
  return longest;
}

TrafficProfile default_traffic_profile() {
  TrafficProfile p;
  p.negative_share = 0.04;
  p.cname_share = 0.05;
  p.ecs_share = 0.10;  // answers depend on the client /24, but the load sends no ECS
  p.stray_nodata_share = 0.02;
  p.stray_nxdomain_share = 0.01;
  return p;
}

namespace {

constexpr std::uint64_t kMaxNames = 10'000'000'000ull;
constexpr double kShareSumTolerance = 1e-6;

// A {min, max} mapping of integers in [lo, hi] with min <= max; absent keys keep the values.
void read_bounds(MapReader& parent, const std::string& key, std::uint64_t lo, std::uint64_t hi, unsigned& min_value,
                 unsigned& max_value) {
  if (!parent.has(key)) return;
  MapReader bounds = parent.map(key);
  min_value = static_cast<unsigned>(bounds.integer_or("min", min_value, lo, hi));
  max_value = static_cast<unsigned>(bounds.integer_or("max", max_value, lo, hi));
  if (min_value > max_value) bounds.fail("min", "must not exceed max");
  bounds.finish();
}

void read_qtypes(MapReader& r, TrafficProfile& t) {
  if (!r.has("qtypes")) return;
  MapReader q = r.map("qtypes");
  t.share_a = q.number("a", 0, 1);
  t.share_aaaa = q.number("aaaa", 0, 1);
  t.share_other = q.number("other", 0, 1);
  t.qtype_per_name = q.boolean_or("per_name", t.qtype_per_name);
  q.finish();
  const double sum = t.share_a + t.share_aaaa + t.share_other;
  if (std::fabs(sum - 1.0) > kShareSumTolerance)
    r.fail("qtypes", "shares a + aaaa + other must sum to 1, got " + std::to_string(sum));
}

void read_ttl(MapReader& r, TrafficProfile& t) {
  if (!r.has("ttl")) return;
  const YAML::Node node = r.raw("ttl");
  if (node.IsMap()) {
    MapReader bounds(r.file(), node, r.key_path("ttl"));
    const auto lo = static_cast<std::uint32_t>(bounds.integer("min", 1, 0x7fffffff));
    const auto hi = static_cast<std::uint32_t>(bounds.integer("max", 1, 0x7fffffff));
    if (lo > hi) bounds.fail("min", "must not exceed max");
    bounds.finish();
    t.ttl = TtlDistribution::range(lo, hi);
    return;
  }
  if (!node.IsSequence()) r.fail("ttl", "expected {min, max} or a list of {seconds, share} buckets");
  std::vector<TtlBucket> buckets;
  double sum = 0;
  for (std::size_t i = 0; i < node.size(); ++i) {
    MapReader b(r.file(), node[i], r.key_path("ttl[" + std::to_string(i) + "]"));
    TtlBucket bucket;
    bucket.seconds = static_cast<std::uint32_t>(b.integer("seconds", 1, 7 * 86400));
    bucket.share = b.number("share", 0, 1);
    b.finish();
    sum += bucket.share;
    buckets.push_back(bucket);
  }
  if (buckets.empty()) r.fail("ttl", "needs at least one bucket");
  if (std::fabs(sum - 1.0) > kShareSumTolerance)
    r.fail("ttl", "bucket shares must sum to 1, got " + std::to_string(sum));
  t.ttl = TtlDistribution::from_buckets(std::move(buckets));
}

void read_answer_traits(MapReader& r, TrafficProfile& t) {
  if (r.has("negative")) {
    MapReader q = r.map("negative");
    t.negative_share = q.number_or("share", t.negative_share, 0, 1);
    t.negative_ttl = static_cast<std::uint32_t>(q.integer_or("ttl", t.negative_ttl, 1, 7 * 86400));
    q.finish();
  }
  if (r.has("cname")) {
    MapReader q = r.map("cname");
    t.cname_share = q.number("share", 0, 1);
    q.finish();
  }
  if (t.negative_share + t.cname_share > 1) r.fail("cname", "negative share + cname share must not exceed 1");
  if (r.has("stray")) {
    MapReader q = r.map("stray");
    t.stray_nodata_share = q.number_or("nodata_share", t.stray_nodata_share, 0, 0.5);
    t.stray_nxdomain_share = q.number_or("nxdomain_share", t.stray_nxdomain_share, 0, 0.5);
    if (t.stray_share() > 0.5) q.fail("nxdomain_share", "nodata_share + nxdomain_share must not exceed 0.5");
    q.finish();
  }
  if (r.has("ecs")) {
    MapReader q = r.map("ecs");
    t.ecs_share = q.number("share", 0, 1);
    t.ecs_subnets = static_cast<std::uint32_t>(q.integer("subnets", 0, 65536));
    t.ecs_prefix = static_cast<std::uint8_t>(q.integer_or("prefix", t.ecs_prefix, 1, 32));
    t.ecs_prefix_v6 = static_cast<std::uint8_t>(q.integer_or("prefix_v6", t.ecs_prefix_v6, 1, 128));
    q.finish();
  }
}

}  // namespace

void read_traffic_profile(MapReader& r, TrafficProfile& t) {
  if (r.has("names")) t.names = r.integer("names", 1, kMaxNames);
  if (r.has("zipf")) t.zipf = r.number("zipf", 0.0, 3.0);
  if (r.has("qps")) {
    t.qps = r.number("qps", 0, 1e7);
    if (t.qps <= 0) r.fail("qps", "must be > 0");
  }
  read_qtypes(r, t);
  read_bounds(r, "records", 1, 16, t.records_min, t.records_max);
  read_bounds(r, "other_rdata_bytes", 1, 4000, t.other_rdata_min, t.other_rdata_max);
  read_bounds(r, "labels", 1, 32, t.labels_min, t.labels_max);
  read_bounds(r, "label_bytes", 1, 63, t.label_bytes_min, t.label_bytes_max);
  // Longest name: labels + "cdn." prefix + a zone of up to 64 bytes must fit 255 bytes.
  if (t.labels_max * (t.label_bytes_max + 1) + 4 + 64 > 255)
    r.fail("labels", "labels.max * (label_bytes.max + 1) must be <= 187 so that names with zone and cdn. fit 255 bytes");
  read_ttl(r, t);
  read_answer_traits(r, t);
}

TrafficProfile parse_traffic_profile(std::string_view yaml_text, const std::string& source) {
  const YAML::Node root = common::parse_yaml_text(yaml_text, source);
  TrafficProfile p;
  if (root.IsNull()) return p;  // an empty file is the default-constructed profile
  MapReader top(source, root, "");
  read_traffic_profile(top, p);
  top.finish();
  return p;
}

TrafficProfile load_traffic_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the traffic profile");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_traffic_profile(text.str(), path);
}

}  // namespace dnsarena::sim

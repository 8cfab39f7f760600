#include "sim/workload/traffic_profile.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

namespace dnsarena::sim {

namespace {

// Where each key was found, for messages about cross-field constraints.
using MarkMap = std::map<std::string, YAML::Mark>;

std::string where(const std::string& source, const YAML::Mark& m) {
  if (m.line < 0) return source;
  return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

[[noreturn]] void fail(const std::string& at, const std::string& key, const std::string& why) {
  throw ProfileError(at + ": key '" + key + "': " + why);
}

std::string scalar_of(const YAML::Node& n, const std::string& source, const std::string& key) {
  if (!n.IsScalar()) fail(where(source, n.Mark()), key, "expected a scalar value");
  return n.Scalar();
}

double read_double(const YAML::Node& n, const std::string& source, const std::string& key, double lo,
                   double hi) {
  const std::string s = scalar_of(n, source, key);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    fail(where(source, n.Mark()), key, "expected a number, got '" + s + "'");
  if (v < lo || v > hi) {
    std::ostringstream o;
    o << "must be in [" << lo << ", " << hi << "], got " << s;
    fail(where(source, n.Mark()), key, o.str());
  }
  return v;
}

std::uint64_t read_uint(const YAML::Node& n, const std::string& source, const std::string& key,
                        std::uint64_t lo, std::uint64_t hi) {
  const std::string s = scalar_of(n, source, key);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    fail(where(source, n.Mark()), key, "expected a non-negative integer, got '" + s + "'");
  if (v < lo || v > hi)
    fail(where(source, n.Mark()), key,
         "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
  return v;
}

using Handler = std::function<void(const YAML::Node&)>;

// Applies `handlers` to every key of mapping `map`; unknown keys are errors.
void apply_map(const YAML::Node& map, const std::string& source, const std::string& prefix,
               const std::map<std::string, Handler>& handlers, MarkMap& marks) {
  if (!map.IsMap()) fail(where(source, map.Mark()), prefix.empty() ? "<top>" : prefix, "expected a mapping");
  for (const auto& kv : map) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    auto it = handlers.find(name);
    if (it == handlers.end()) {
      std::string known;
      for (const auto& h : handlers) known += (known.empty() ? "" : ", ") + h.first;
      fail(where(source, kv.first.Mark()), key, "unknown key (known: " + known + ")");
    }
    if (marks.count(key)) fail(where(source, kv.first.Mark()), key, "duplicate key");
    marks[key] = kv.second.Mark();
    it->second(kv.second);
  }
}

void check(bool ok, const std::string& source, const MarkMap& marks, const std::string& key,
           const std::string& why) {
  if (ok) return;
  auto it = marks.find(key);
  fail(it == marks.end() ? source : where(source, it->second), key, why);
}

constexpr std::uint64_t kMaxNames = 100'000'000;  // the upstream's name index costs 16 B/name

void validate_with_marks(const TrafficProfile& p, const std::string& src, const MarkMap& mk) {
  const MixProfile& m = p.mix;
  auto share = [&](double v, const std::string& key) {
    check(v >= 0 && v <= 1, src, mk, key, "must be in [0, 1]");
  };
  share(m.share_a, "mix.share_a");
  share(m.share_aaaa, "mix.share_aaaa");
  share(m.share_txt, "mix.share_txt");
  check(m.share_a + m.share_aaaa + m.share_txt > 0, src, mk, "mix.share_a",
        "share_a + share_aaaa + share_txt must be > 0");
  share(m.negative_share, "mix.negative_share");
  share(m.cname_share, "mix.cname_share");
  check(m.min_records >= 1 && m.min_records <= m.max_records, src, mk, "mix.min_records",
        "must be >= 1 and <= max_records");
  check(m.max_records <= 16, src, mk, "mix.max_records", "must be <= 16");
  check(m.txt_min_bytes >= 1 && m.txt_min_bytes <= m.txt_max_bytes, src, mk, "mix.txt_min_bytes",
        "must be >= 1 and <= txt_max_bytes");
  check(m.txt_max_bytes <= 256, src, mk, "mix.txt_max_bytes", "must be <= 256 (one character-string)");
  check(m.min_labels >= 1 && m.min_labels <= m.max_labels, src, mk, "mix.min_labels",
        "must be >= 1 and <= max_labels");
  check(m.label_min >= 1 && m.label_min <= m.label_max, src, mk, "mix.label_min",
        "must be >= 1 and <= label_max");
  check(m.label_max <= 63, src, mk, "mix.label_max", "must be <= 63");
  // Longest name: labels + "cdn." prefix + a zone of up to 64 bytes must fit 255 bytes.
  check(m.max_labels * (m.label_max + 1) + 4 + 64 <= 255, src, mk, "mix.max_labels",
        "max_labels * (label_max + 1) must be <= 187 so that names with zone and cdn. fit 255 bytes");
  check(m.ttl_min <= m.ttl_max, src, mk, "mix.ttl_min", "must be <= ttl_max");
  check(m.ttl_max <= 0x7fffffffu, src, mk, "mix.ttl_max", "must be <= 2147483647");
  check(p.names >= 1 && p.names <= kMaxNames, src, mk, "names",
        "must be in [1, " + std::to_string(kMaxNames) + "]");
  check(p.zipf_s >= 0 && p.zipf_s <= 10, src, mk, "zipf_s", "must be in [0, 10]");
  check(p.qps > 0 && p.qps <= 10e6, src, mk, "qps", "must be in (0, 10000000]");
  share(p.ecs_share, "ecs_share");
  check(p.ecs_client_subnets <= 65536, src, mk, "ecs_client_subnets", "must be in [0, 65536]");
  check(p.ecs_scope_prefix >= 1 && p.ecs_scope_prefix <= 32, src, mk, "ecs_scope_prefix",
        "must be in [1, 32]");
  check(p.ecs_scope_prefix_v6 >= 1 && p.ecs_scope_prefix_v6 <= 128, src, mk, "ecs_scope_prefix_v6",
        "must be in [1, 128]");
  share(p.query_nodata_share, "query_nodata_share");
  share(p.query_nxdomain_share, "query_nxdomain_share");
  check(p.query_nodata_share + p.query_nxdomain_share <= 1, src, mk, "query_nxdomain_share",
        "query_nodata_share + query_nxdomain_share must be <= 1");
  check(p.negative_ttl <= 0x7fffffffu, src, mk, "negative_ttl", "must be <= 2147483647");
}

}  // namespace

MixProfile TrafficProfile::generator_mix() const {
  MixProfile m = mix;
  m.ecs_share = ecs_share;
  m.ecs_prefix = ecs_scope_prefix;
  m.ecs_subnets = ecs_client_subnets == 0 ? 1 : ecs_client_subnets;
  return m;
}

bool TrafficProfile::operator==(const TrafficProfile& o) const {
  const MixProfile &a = mix, &b = o.mix;
  const bool mix_eq = a.share_a == b.share_a && a.share_aaaa == b.share_aaaa && a.share_txt == b.share_txt &&
                      a.min_records == b.min_records && a.max_records == b.max_records &&
                      a.txt_min_bytes == b.txt_min_bytes && a.txt_max_bytes == b.txt_max_bytes &&
                      a.min_labels == b.min_labels && a.max_labels == b.max_labels &&
                      a.label_min == b.label_min && a.label_max == b.label_max && a.ttl_min == b.ttl_min &&
                      a.ttl_max == b.ttl_max && a.negative_share == b.negative_share &&
                      a.cname_share == b.cname_share;
  return mix_eq && names == o.names && zipf_s == o.zipf_s && qps == o.qps && ecs_share == o.ecs_share &&
         ecs_client_subnets == o.ecs_client_subnets && ecs_scope_prefix == o.ecs_scope_prefix &&
         ecs_scope_prefix_v6 == o.ecs_scope_prefix_v6 && query_nodata_share == o.query_nodata_share &&
         query_nxdomain_share == o.query_nxdomain_share && negative_ttl == o.negative_ttl;
}

TrafficProfile default_traffic_profile() { return TrafficProfile{}; }

void validate_traffic_profile(const TrafficProfile& p, const std::string& source) {
  validate_with_marks(p, source, MarkMap{});
}

TrafficProfile parse_traffic_profile(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw ProfileError(where(source, e.mark) + ": YAML syntax error: " + e.msg);
  }
  TrafficProfile p;
  if (root.IsNull()) return p;  // an empty file is the default profile
  MarkMap marks;
  const std::string& s = source;
  auto u32 = [&](unsigned& dst, std::string key, std::uint64_t lo, std::uint64_t hi) {
    return [&dst, key, lo, hi, &s](const YAML::Node& n) {
      dst = static_cast<unsigned>(read_uint(n, s, key, lo, hi));
    };
  };
  auto dbl = [&](double& dst, std::string key, double lo, double hi) {
    return [&dst, key, lo, hi, &s](const YAML::Node& n) { dst = read_double(n, s, key, lo, hi); };
  };
  MixProfile& m = p.mix;
  const std::map<std::string, Handler> mix_handlers = {
      {"share_a", dbl(m.share_a, "mix.share_a", 0, 1)},
      {"share_aaaa", dbl(m.share_aaaa, "mix.share_aaaa", 0, 1)},
      {"share_txt", dbl(m.share_txt, "mix.share_txt", 0, 1)},
      {"min_records", u32(m.min_records, "mix.min_records", 1, 16)},
      {"max_records", u32(m.max_records, "mix.max_records", 1, 16)},
      {"txt_min_bytes", u32(m.txt_min_bytes, "mix.txt_min_bytes", 1, 256)},
      {"txt_max_bytes", u32(m.txt_max_bytes, "mix.txt_max_bytes", 1, 256)},
      {"min_labels", u32(m.min_labels, "mix.min_labels", 1, 32)},
      {"max_labels", u32(m.max_labels, "mix.max_labels", 1, 32)},
      {"label_min", u32(m.label_min, "mix.label_min", 1, 63)},
      {"label_max", u32(m.label_max, "mix.label_max", 1, 63)},
      {"ttl_min", [&](const YAML::Node& n) { m.ttl_min = static_cast<std::uint32_t>(read_uint(n, s, "mix.ttl_min", 0, 0x7fffffff)); }},
      {"ttl_max", [&](const YAML::Node& n) { m.ttl_max = static_cast<std::uint32_t>(read_uint(n, s, "mix.ttl_max", 0, 0x7fffffff)); }},
      {"negative_share", dbl(m.negative_share, "mix.negative_share", 0, 1)},
      {"cname_share", dbl(m.cname_share, "mix.cname_share", 0, 1)},
  };
  const std::map<std::string, Handler> top_handlers = {
      {"mix", [&](const YAML::Node& n) { apply_map(n, s, "mix", mix_handlers, marks); }},
      {"names", [&](const YAML::Node& n) { p.names = read_uint(n, s, "names", 1, kMaxNames); }},
      {"zipf_s", dbl(p.zipf_s, "zipf_s", 0, 10)},
      {"qps", [&](const YAML::Node& n) {
         p.qps = read_double(n, s, "qps", 0, 10e6);
         if (p.qps <= 0) fail(where(s, n.Mark()), "qps", "must be > 0");
       }},
      {"ecs_share", dbl(p.ecs_share, "ecs_share", 0, 1)},
      {"ecs_client_subnets", [&](const YAML::Node& n) {
         p.ecs_client_subnets = static_cast<std::uint32_t>(read_uint(n, s, "ecs_client_subnets", 0, 65536));
       }},
      {"ecs_scope_prefix", [&](const YAML::Node& n) {
         p.ecs_scope_prefix = static_cast<std::uint8_t>(read_uint(n, s, "ecs_scope_prefix", 1, 32));
       }},
      {"ecs_scope_prefix_v6", [&](const YAML::Node& n) {
         p.ecs_scope_prefix_v6 = static_cast<std::uint8_t>(read_uint(n, s, "ecs_scope_prefix_v6", 1, 128));
       }},
      {"query_nodata_share", dbl(p.query_nodata_share, "query_nodata_share", 0, 1)},
      {"query_nxdomain_share", dbl(p.query_nxdomain_share, "query_nxdomain_share", 0, 1)},
      {"negative_ttl", [&](const YAML::Node& n) {
         p.negative_ttl = static_cast<std::uint32_t>(read_uint(n, s, "negative_ttl", 0, 0x7fffffff));
       }},
  };
  apply_map(root, s, "", top_handlers, marks);
  validate_with_marks(p, s, marks);
  return p;
}

TrafficProfile load_traffic_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ProfileError(path + ": cannot open traffic profile");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_traffic_profile(text.str(), path);
}

}  // namespace dnsarena::sim

#include "sim/workload/traffic_profile.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "common/yaml_reader.hpp"

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

// Reads every key of a profile mapping (missing keys keep their defaults); per-key ranges
// here, cross-field constraints in validate_with_marks.
void read_profile(common::MapReader& r, TrafficProfile& p) {
  auto u32 = [](common::MapReader& m, const char* key, unsigned v, std::uint64_t lo, std::uint64_t hi) {
    return static_cast<unsigned>(m.integer_or(key, v, lo, hi));
  };
  if (r.has("mix")) {
    common::MapReader m = r.map("mix");
    MixProfile& x = p.mix;
    x.share_a = m.number_or("share_a", x.share_a, 0, 1);
    x.share_aaaa = m.number_or("share_aaaa", x.share_aaaa, 0, 1);
    x.share_txt = m.number_or("share_txt", x.share_txt, 0, 1);
    x.min_records = u32(m, "min_records", x.min_records, 1, 16);
    x.max_records = u32(m, "max_records", x.max_records, 1, 16);
    x.txt_min_bytes = u32(m, "txt_min_bytes", x.txt_min_bytes, 1, 256);
    x.txt_max_bytes = u32(m, "txt_max_bytes", x.txt_max_bytes, 1, 256);
    x.min_labels = u32(m, "min_labels", x.min_labels, 1, 32);
    x.max_labels = u32(m, "max_labels", x.max_labels, 1, 32);
    x.label_min = u32(m, "label_min", x.label_min, 1, 63);
    x.label_max = u32(m, "label_max", x.label_max, 1, 63);
    x.ttl_min = static_cast<std::uint32_t>(m.integer_or("ttl_min", x.ttl_min, 0, 0x7fffffff));
    x.ttl_max = static_cast<std::uint32_t>(m.integer_or("ttl_max", x.ttl_max, 0, 0x7fffffff));
    x.negative_share = m.number_or("negative_share", x.negative_share, 0, 1);
    x.cname_share = m.number_or("cname_share", x.cname_share, 0, 1);
    m.finish();
  } else {
    r.raw("mix");  // `mix:` with no value keeps the default mix
  }
  p.names = r.integer_or("names", p.names, 1, kMaxNames);
  p.zipf_s = r.number_or("zipf_s", p.zipf_s, 0, 10);
  p.qps = r.number_or("qps", p.qps, 0, 10e6);
  if (p.qps <= 0) r.fail("qps", "must be > 0");
  p.ecs_share = r.number_or("ecs_share", p.ecs_share, 0, 1);
  p.ecs_client_subnets = static_cast<std::uint32_t>(r.integer_or("ecs_client_subnets", p.ecs_client_subnets, 0, 65536));
  p.ecs_scope_prefix = static_cast<std::uint8_t>(r.integer_or("ecs_scope_prefix", p.ecs_scope_prefix, 1, 32));
  p.ecs_scope_prefix_v6 = static_cast<std::uint8_t>(r.integer_or("ecs_scope_prefix_v6", p.ecs_scope_prefix_v6, 1, 128));
  p.query_nodata_share = r.number_or("query_nodata_share", p.query_nodata_share, 0, 1);
  p.query_nxdomain_share = r.number_or("query_nxdomain_share", p.query_nxdomain_share, 0, 1);
  p.negative_ttl = static_cast<std::uint32_t>(r.integer_or("negative_ttl", p.negative_ttl, 0, 0x7fffffff));
  r.finish();
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
  const YAML::Node root = common::parse_yaml_text(yaml_text, source);
  TrafficProfile p;
  if (root.IsNull()) return p;  // an empty file is the default profile
  common::MapReader top(source, root, "");
  read_profile(top, p);
  // Where each key's value is, for messages about cross-field constraints.
  MarkMap marks;
  for (const auto& kv : root) marks[kv.first.Scalar()] = kv.second.Mark();
  if (const YAML::Node mix = root["mix"]; mix.IsMap())
    for (const auto& kv : mix) marks["mix." + kv.first.Scalar()] = kv.second.Mark();
  validate_with_marks(p, source, marks);
  return p;
}

TrafficProfile load_traffic_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ProfileError(path + ": cannot open the traffic profile");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_traffic_profile(text.str(), path);
}

}  // namespace dnsarena::sim

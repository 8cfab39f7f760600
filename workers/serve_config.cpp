#include "workers/serve_config.hpp"

#include "cache/dns_name.hpp"

#include <arpa/inet.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace dnsarena::workers {

Endpoint Endpoint::parse(const std::string& s) {
  Endpoint e;
  e.text = s;
  std::string host, port;
  if (!s.empty() && s[0] == '[') {
    const auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      throw std::invalid_argument("'" + s + "' is not [IPv6]:port");
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument("'" + s + "' is not address:port");
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  char* end = nullptr;
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p > 65535) throw std::invalid_argument("'" + s + "': bad port '" + port + "'");
  auto* a4 = reinterpret_cast<sockaddr_in*>(&e.addr);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&e.addr);
  if (inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<std::uint16_t>(p));
    e.len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<std::uint16_t>(p));
    e.len = sizeof(sockaddr_in6);
  } else {
    throw std::invalid_argument("'" + s + "': '" + host + "' is not an IPv4 or IPv6 address");
  }
  return e;
}

std::uint16_t Endpoint::port() const {
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
}

const char* to_string(EcsPolicy p) {
  switch (p) {
    case EcsPolicy::off: return "off";
    case EcsPolicy::forward: return "forward";
    case EcsPolicy::synthesize: return "synthesize";
  }
  return "?";
}

EcsPolicy parse_ecs_policy(const std::string& s) {
  if (s == "off") return EcsPolicy::off;
  if (s == "forward") return EcsPolicy::forward;
  if (s == "synthesize") return EcsPolicy::synthesize;
  throw std::invalid_argument("ECS policy '" + s + "' is not one of off, forward, synthesize");
}

std::uint64_t parse_size(const std::string& s) {
  if (s.empty()) throw std::invalid_argument("empty size");
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) throw std::invalid_argument("size '" + s + "' does not start with a number");
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  std::uint64_t mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "Ki") mult = 1ull << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "Mi") mult = 1ull << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "Gi") mult = 1ull << 30;
  else throw std::invalid_argument("size '" + s + "': unknown suffix (use K, M or G)");
  return v * mult;
}

unsigned ServeConfig::resolved_workers() const {
  if (workers) return workers;
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1u;
}

ForwardZone ForwardZone::make(const std::string& zone, std::vector<Endpoint> servers) {
  ForwardZone z;
  z.name = cache::name_to_wire(zone);  // throws invalid_argument for a bad name
  for (auto& c : z.name) c = cache::ascii_lower(c);
  z.text = cache::wire_to_text(z.name);
  if (servers.empty()) throw std::invalid_argument("forward zone '" + z.text + "' has no upstreams");
  z.upstreams = std::move(servers);
  return z;
}

bool ForwardZone::contains(const std::uint8_t* n) const {
  std::size_t len = 0;
  while (n[len] != 0) len += n[len] + 1u;
  ++len;
  if (len < name.size()) return false;
  // Skip labels until the rest has the zone's length, then compare case-insensitively.
  const std::uint8_t* rest = n;
  std::size_t rest_len = len;
  while (rest_len > name.size()) {
    rest_len -= rest[0] + 1u;
    rest += rest[0] + 1u;
  }
  return rest_len == name.size() && cache::wire_names_equal_ci({rest, rest_len}, {name.data(), name.size()});
}

std::vector<ForwardZone> ServeConfig::zones() const {
  std::vector<ForwardZone> z = forward_zones;
  const bool has_root = std::any_of(z.begin(), z.end(), [](const ForwardZone& f) { return f.name.size() == 1; });
  if (!has_root && !upstreams.empty()) z.push_back(ForwardZone::make(".", upstreams));
  return z;
}

void ServeConfig::validate() const {
  if (upstreams.empty() && forward_zones.empty())
    throw std::invalid_argument("no upstream server configured (upstreams / forward_zones / --upstream)");
  if (workers > 64) throw std::invalid_argument("workers: at most 64");
  if (resolved_workers() + 4 > geometry.stat_slots)
    throw std::invalid_argument("workers: more workers than the segment has stat slots");
  if (upstream_timeout_ms == 0) throw std::invalid_argument("upstream_timeout_ms must be > 0");
  if (ttl_floor > ttl_ceiling) throw std::invalid_argument("ttl.floor is above ttl.ceiling");
  if (ecs_ipv4_prefix > 32) throw std::invalid_argument("ecs.ipv4_prefix must be <= 32");
  if (ecs_ipv6_prefix > 128) throw std::invalid_argument("ecs.ipv6_prefix must be <= 128");
  if (tcp_max_connections == 0) throw std::invalid_argument("tcp.max_connections must be > 0");
  if (upstream_max_in_flight == 0) throw std::invalid_argument("upstream_max_in_flight must be > 0");
  if (upstream_max_per_name == 0) throw std::invalid_argument("upstream_max_per_name must be > 0");
  if (rate_limit.ipv4_prefix > 32 || rate_limit.ipv6_prefix > 128)
    throw std::invalid_argument("rate_limit: ipv4_prefix <= 32, ipv6_prefix <= 128");
  if (backoff_initial_ms == 0 || backoff_max_ms < backoff_initial_ms)
    throw std::invalid_argument("restart: need 0 < backoff_initial_ms <= backoff_max_ms");
  if (heartbeat_timeout_ms != 0 && heartbeat_timeout_ms < 4 * 250)
    throw std::invalid_argument("restart.heartbeat_timeout_ms: 0 (off) or at least 1000 (4 heartbeats)");
  cache::SegmentLayout::compute(geometry);  // throws naming the bad parameter
  if (!metrics_listen.empty()) Endpoint::parse(metrics_listen);
  static const std::set<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (!kLogLevels.count(log_level))
    throw std::invalid_argument("log_level '" + log_level + "' is not trace, debug, info, warn, error, critical or off");
}

namespace {

struct Reader {
  std::string file;

  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& what) const {
    const YAML::Mark m = n.Mark();
    throw ConfigError(file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": key '" + key +
                      "': " + what);
  }
  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a single value");
    return n.Scalar();
  }
  std::uint64_t number(const YAML::Node& n, const std::string& key, std::uint64_t max) const {
    const std::string s = scalar(n, key);
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || s[0] == '-') fail(n, key, "'" + s + "' is not a non-negative integer");
    if (v > max) fail(n, key, "'" + s + "' is above the maximum " + std::to_string(max));
    return v;
  }
  std::uint64_t size(const YAML::Node& n, const std::string& key) const {
    try {
      return parse_size(scalar(n, key));
    } catch (const std::invalid_argument& e) {
      fail(n, key, e.what());
    }
  }
  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string s = scalar(n, key);
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    fail(n, key, "'" + s + "' is not true or false");
  }
  Endpoint endpoint(const YAML::Node& n, const std::string& key) const {
    try {
      return Endpoint::parse(scalar(n, key));
    } catch (const std::invalid_argument& e) {
      fail(n, key, e.what());
    }
  }
  // Calls handlers[key] for every key of a map; rejects keys without a handler.
  void each(const YAML::Node& map, const std::string& prefix,
            const std::map<std::string, std::function<void(const YAML::Node&, const std::string&)>>& handlers) const {
    if (!map.IsMap()) fail(map, prefix.empty() ? "(top level)" : prefix, "expected a mapping of keys");
    for (const auto& kv : map) {
      const std::string k = kv.first.as<std::string>();
      const std::string full = prefix.empty() ? k : prefix + "." + k;
      auto it = handlers.find(k);
      if (it == handlers.end()) {
        std::string known;
        for (const auto& h : handlers) known += (known.empty() ? "" : ", ") + h.first;
        fail(kv.first, full, "unknown key (known here: " + known + ")");
      }
      it->second(kv.second, full);
    }
  }
};

}  // namespace

ServeConfig load_serve_config(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(path + ": cannot open the file");
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  }
  ServeConfig c;
  if (root.IsNull()) return c;
  Reader r{path};
  using N = const YAML::Node&;
  using K = const std::string&;
  r.each(root, "",
         {{"listen", [&](N n, K k) { c.listen = r.endpoint(n, k); }},
          {"workers", [&](N n, K k) { c.workers = static_cast<unsigned>(r.number(n, k, 64)); }},
          {"upstreams",
           [&](N n, K k) {
             c.upstreams.clear();
             if (n.IsScalar()) {
               c.upstreams.push_back(r.endpoint(n, k));
               return;
             }
             if (!n.IsSequence()) r.fail(n, k, "expected a list of address:port");
             for (const auto& u : n) c.upstreams.push_back(r.endpoint(u, k));
           }},
          {"forward_zones",
           [&](N n, K k) {
             if (!n.IsSequence()) r.fail(n, k, "expected a list of {zone: NAME, upstreams: [address:port, ...]}");
             c.forward_zones.clear();
             for (const auto& item : n) {
               std::string zone;
               std::vector<Endpoint> servers;
               r.each(item, k,
                      {{"zone", [&](N v, K kk) { zone = r.scalar(v, kk); }},
                       {"upstreams", [&](N v, K kk) {
                          if (v.IsScalar()) servers.push_back(r.endpoint(v, kk));
                          else if (v.IsSequence())
                            for (const auto& u : v) servers.push_back(r.endpoint(u, kk));
                          else r.fail(v, kk, "expected a list of address:port");
                        }}});
               try {
                 c.forward_zones.push_back(ForwardZone::make(zone, std::move(servers)));
               } catch (const std::invalid_argument& e) {
                 r.fail(item, k, e.what());
               }
             }
           }},
          {"upstream_timeout_ms", [&](N n, K k) { c.upstream_timeout_ms = static_cast<unsigned>(r.number(n, k, 60000)); }},
          {"upstream_attempts", [&](N n, K k) { c.upstream_attempts = static_cast<unsigned>(r.number(n, k, 16)); }},
          {"upstream_max_in_flight",
           [&](N n, K k) { c.upstream_max_in_flight = static_cast<unsigned>(r.number(n, k, 1u << 20)); }},
          {"upstream_jostle_timeout_ms",
           [&](N n, K k) { c.upstream_jostle_timeout_ms = static_cast<unsigned>(r.number(n, k, 600000)); }},
          {"upstream_max_per_name",
           [&](N n, K k) { c.upstream_max_per_name = static_cast<unsigned>(r.number(n, k, 1u << 20)); }},
          {"upstream_case_randomization", [&](N n, K k) { c.upstream_case_randomization = r.boolean(n, k); }},
          {"udp",
           [&](N n, K k) {
             r.each(n, k,
                    {{"receive_buffer", [&](N v, K kk) { c.udp_receive_buffer = r.size(v, kk); }},
                     {"send_buffer", [&](N v, K kk) { c.udp_send_buffer = r.size(v, kk); }}});
           }},
          {"access_control",
           [&](N n, K k) {
             if (!n.IsSequence()) r.fail(n, k, "expected a list of 'SUBNET allow|refuse|deny'");
             std::vector<AccessRule> rules;
             for (const auto& item : n) try {
                 rules.push_back(AccessRule::parse(r.scalar(item, k)));
               } catch (const std::invalid_argument& e) {
                 r.fail(item, k, e.what());
               }
             c.access_control = AccessControl(std::move(rules));
           }},
          {"rate_limit",
           [&](N n, K k) {
             r.each(n, k,
                    {{"responses_per_second",
                      [&](N v, K kk) {
                        c.rate_limit.responses_per_second = static_cast<unsigned>(r.number(v, kk, 1u << 24));
                      }},
                     {"slip", [&](N v, K kk) { c.rate_limit.slip = static_cast<unsigned>(r.number(v, kk, 100)); }},
                     {"ipv4_prefix",
                      [&](N v, K kk) { c.rate_limit.ipv4_prefix = static_cast<std::uint8_t>(r.number(v, kk, 32)); }},
                     {"ipv6_prefix",
                      [&](N v, K kk) { c.rate_limit.ipv6_prefix = static_cast<std::uint8_t>(r.number(v, kk, 128)); }},
                     {"table_size",
                      [&](N v, K kk) { c.rate_limit.table_size = static_cast<unsigned>(r.number(v, kk, 1u << 24)); }}});
           }},
          {"cache",
           [&](N n, K k) {
             r.each(n, k,
                    {{"segment", [&](N v, K kk) { c.segment = r.scalar(v, kk); }},
                     {"max_entries", [&](N v, K kk) { c.geometry.max_entries = r.number(v, kk, 1ull << 32); }},
                     {"arena_bytes", [&](N v, K kk) { c.geometry.arena_bytes = r.size(v, kk); }},
                     {"region_bytes",
                      [&](N v, K kk) { c.geometry.region_bytes = static_cast<std::uint32_t>(r.size(v, kk)); }},
                     {"reset_on_mismatch", [&](N v, K kk) { c.reset_on_mismatch = r.boolean(v, kk); }}});
           }},
          {"ttl",
           [&](N n, K k) {
             r.each(n, k,
                    {{"floor", [&](N v, K kk) { c.ttl_floor = static_cast<std::uint32_t>(r.number(v, kk, 1u << 31)); }},
                     {"ceiling",
                      [&](N v, K kk) { c.ttl_ceiling = static_cast<std::uint32_t>(r.number(v, kk, 1u << 31)); }},
                     {"negative_ceiling", [&](N v, K kk) {
                        c.negative_ttl_ceiling = static_cast<std::uint32_t>(r.number(v, kk, 1u << 31));
                      }}});
           }},
          {"ecs",
           [&](N n, K k) {
             r.each(n, k,
                    {{"policy",
                      [&](N v, K kk) {
                        // YAML reads a bare `off` as a boolean-looking scalar; accept it.
                        try {
                          c.ecs_policy = parse_ecs_policy(r.scalar(v, kk));
                        } catch (const std::invalid_argument& e) {
                          r.fail(v, kk, e.what());
                        }
                      }},
                     {"ipv4_prefix",
                      [&](N v, K kk) { c.ecs_ipv4_prefix = static_cast<std::uint8_t>(r.number(v, kk, 32)); }},
                     {"ipv6_prefix",
                      [&](N v, K kk) { c.ecs_ipv6_prefix = static_cast<std::uint8_t>(r.number(v, kk, 128)); }}});
           }},
          {"tcp",
           [&](N n, K k) {
             r.each(n, k,
                    {{"idle_timeout_ms",
                      [&](N v, K kk) { c.tcp_idle_timeout_ms = static_cast<unsigned>(r.number(v, kk, 3600000)); }},
                     {"max_connections",
                      [&](N v, K kk) { c.tcp_max_connections = static_cast<unsigned>(r.number(v, kk, 65536)); }},
                     {"max_connections_per_client", [&](N v, K kk) {
                        c.tcp_max_connections_per_client = static_cast<unsigned>(r.number(v, kk, 65536));
                      }}});
           }},
          {"stats",
           [&](N n, K k) {
             r.each(n, k, {{"metrics_listen", [&](N v, K kk) {
                              c.metrics_listen = v.IsNull() ? "" : r.scalar(v, kk);
                              if (!c.metrics_listen.empty()) r.endpoint(v, kk);
                            }}});
           }},
          {"restart",
           [&](N n, K k) {
             r.each(n, k,
                    {{"backoff_initial_ms",
                      [&](N v, K kk) { c.backoff_initial_ms = static_cast<unsigned>(r.number(v, kk, 600000)); }},
                     {"backoff_max_ms",
                      [&](N v, K kk) { c.backoff_max_ms = static_cast<unsigned>(r.number(v, kk, 600000)); }},
                     {"heartbeat_timeout_ms", [&](N v, K kk) {
                        c.heartbeat_timeout_ms = static_cast<unsigned>(r.number(v, kk, 600000));
                      }}});
           }},
          {"log_level", [&](N n, K k) { c.log_level = r.scalar(n, k); }}});
  return c;
}

}  // namespace dnsarena::workers

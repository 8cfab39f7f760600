// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/serve_config.hpp"

#include <arpa/inet.h>
#include <sys/un.h>
#include <unistd.h>
#include <filesystem>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>

#include "common/ip_address.hpp"
#include "common/yaml_reader.hpp"
#include "workers/server_cookies.hpp"
#include "workers/upstream_stream.hpp"
#include "wire/dns_name.hpp"

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
  e.len = common::ip_socket_address(host, static_cast<std::uint16_t>(p), e.addr);
  if (e.len == 0) throw std::invalid_argument("'" + s + "': '" + host + "' is not an IPv4 or IPv6 address");
  return e;
}

std::uint16_t Endpoint::port() const {
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
}

bool Endpoint::wildcard() const {
  if (addr.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr);
}

bool Endpoint::same_address(const Endpoint& o) const {
  if (family() != o.family() || port() != o.port()) return false;
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&o.addr)->sin_addr.s_addr;
  return IN6_ARE_ADDR_EQUAL(&reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr,
                            &reinterpret_cast<const sockaddr_in6*>(&o.addr)->sin6_addr);
}

std::string join_endpoints(const std::vector<Endpoint>& endpoints) {
  std::string s;
  for (const Endpoint& e : endpoints) s += (s.empty() ? "" : ", ") + e.text;
  return s;
}

namespace {

// Why `listen` cannot be served as a whole ("" when it can): empty, or an address twice.
std::string listen_problem(const std::vector<Endpoint>& listen) {
  if (listen.empty()) return "expected at least one address:port";
  if (listen.size() > kMaxListen) return "at most " + std::to_string(kMaxListen) + " addresses";
  for (std::size_t i = 0; i < listen.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (listen[i].same_address(listen[j]))
        return "'" + listen[i].text + "' is listed twice" +
               (listen[i].text != listen[j].text ? " (as '" + listen[j].text + "')" : "");
  return "";
}

}  // namespace

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
  z.name = wire::name_to_wire(zone);  // throws invalid_argument for a bad name
  for (auto& c : z.name) c = wire::ascii_lower(c);
  z.text = wire::wire_to_text(z.name);
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
  return rest_len == name.size() && wire::wire_names_equal_ci({rest, rest_len}, {name.data(), name.size()});
}

std::vector<ForwardZone> ServeConfig::zones() const {
  std::vector<ForwardZone> z = forward_zones;
  const bool has_root = std::any_of(z.begin(), z.end(), [](const ForwardZone& f) { return f.name.size() == 1; });
  if (!has_root && !upstreams.empty()) {
    z.push_back(ForwardZone::make(".", upstreams));
    z.back().trust_ad = upstreams_trust_ad;
    z.back().transport = upstreams_transport;
    z.back().tls_auth_name = upstreams_tls_auth_name;
    z.back().tls_ca_file = upstreams_tls_ca_file;
  }
  return z;
}

const char* to_string(UpstreamTransport t) {
  switch (t) {
    case UpstreamTransport::udp: return "udp";
    case UpstreamTransport::tcp: return "tcp";
    case UpstreamTransport::tls: return "tls";
  }
  return "?";
}

UpstreamTransport parse_upstream_transport(const std::string& s) {
  if (s == "udp") return UpstreamTransport::udp;
  if (s == "tcp") return UpstreamTransport::tcp;
  if (s == "tls") return UpstreamTransport::tls;
  throw std::invalid_argument("'" + s + "' is not a transport (udp, tcp or tls)");
}

namespace {

// DoT needs its files named, and its addresses may not be plain listen addresses too
// (both sockets would bind with SO_REUSEPORT and split the connections between them).
void validate_tls(const TlsConfig& tls, const std::vector<Endpoint>& plain) {
  if (!tls.enabled()) return;
  if (tls.certificate.empty()) throw std::invalid_argument("tls.certificate: needed with tls.listen");
  if (tls.key.empty()) throw std::invalid_argument("tls.key: needed with tls.listen");
  if (const std::string why = listen_problem(tls.listen); !why.empty()) throw std::invalid_argument("tls.listen: " + why);
  for (const Endpoint& t : tls.listen)
    for (const Endpoint& p : plain)
      if (t.same_address(p)) throw std::invalid_argument("tls.listen: '" + t.text + "' is also a plain listen address");
  if (tls.handshake_timeout_ms == 0) throw std::invalid_argument("tls.handshake_timeout_ms must be > 0");
  if (tls.max_handshakes == 0) throw std::invalid_argument("tls.max_handshakes must be > 0");
}

// DoH serves the tls: section's files, on addresses of its own. The path is one absolute
// path: no query string, fragment or space (the request's query string is cut off before
// it is compared).
void validate_https(const HttpsConfig& https, const TlsConfig& tls, const std::vector<Endpoint>& plain) {
  if (!https.enabled()) return;
  if (const std::string why = listen_problem(https.listen); !why.empty())
    throw std::invalid_argument("https.listen: " + why);
  for (const Endpoint& h : https.listen) {
    for (const Endpoint& p : plain)
      if (h.same_address(p)) throw std::invalid_argument("https.listen: '" + h.text + "' is also a plain listen address");
    for (const Endpoint& t : tls.listen)
      if (h.same_address(t)) throw std::invalid_argument("https.listen: '" + h.text + "' is also a tls.listen address");
  }
  if (tls.certificate.empty() || tls.key.empty())
    throw std::invalid_argument("https.listen needs a certificate: set tls.certificate and tls.key");
  if (https.path.empty() || https.path[0] != '/' ||
      https.path.find_first_of("?# \t\r\n") != std::string::npos)
    throw std::invalid_argument("https.path: '" + https.path + "' is not an absolute path without '?', '#' or spaces");
  if (https.max_streams == 0) throw std::invalid_argument("https.max_streams must be > 0");
  if (tls.handshake_timeout_ms == 0) throw std::invalid_argument("tls.handshake_timeout_ms must be > 0");
  if (tls.max_handshakes == 0) throw std::invalid_argument("tls.max_handshakes must be > 0");
}

// A TLS zone names the certificate it expects, and its trust anchors load; TLS settings
// on a zone that is not TLS are a mistake said rather than ignored.
void validate_transport(const ForwardZone& z) {
  const std::string where = z.name.size() == 1 ? "upstreams" : "forward_zones (zone " + z.text + ")";
  if (z.transport != UpstreamTransport::tls) {
    if (!z.tls_auth_name.empty() || !z.tls_ca_file.empty())
      throw std::invalid_argument(where + ": tls_auth_name and tls_ca_file need transport: tls");
    return;
  }
  if (z.tls_auth_name.empty())
    throw std::invalid_argument(where + ": transport tls needs tls_auth_name, the name the upstream's "
                                "certificate is checked against");
  try {
    UpstreamTlsTrust trust(z.tls_ca_file);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
}

}  // namespace

void ServeConfig::validate() const {
  recursion.validate(!upstreams.empty());
  if (upstreams.empty() && forward_zones.empty() && !recursion.enabled)
    throw std::invalid_argument("no upstream server configured (upstreams / forward_zones / --upstream)");
  if (const std::string why = listen_problem(listen); !why.empty()) throw std::invalid_argument("listen: " + why);
  if (workers > 64) throw std::invalid_argument("workers: at most 64");
  if (resolved_workers() + 4 > geometry.stat_slots)
    throw std::invalid_argument("workers: more workers than the segment has stat slots");
  if (upstream_timeout_ms == 0) throw std::invalid_argument("upstream_timeout_ms must be > 0");
  if (query_timeout_ms == 0) throw std::invalid_argument("query_timeout_ms must be > 0");
  if (upstream_idle_timeout_ms == 0) throw std::invalid_argument("upstream_idle_timeout_ms must be > 0");
  for (const ForwardZone& z : zones()) validate_transport(z);
  if (ttl_floor > ttl_ceiling) throw std::invalid_argument("ttl.floor is above ttl.ceiling");
  if (stale_client_timeout_ms == 0) throw std::invalid_argument("stale.client_timeout_ms must be > 0");
  if (stale_ttl_s == 0) throw std::invalid_argument("stale.ttl_s must be > 0");
  if (failure_min_s == 0 || failure_max_s < failure_min_s)
    throw std::invalid_argument("failure_cache: need 0 < min_s <= max_s");
  if (ecs_ipv4_prefix > 32) throw std::invalid_argument("ecs.ipv4_prefix must be <= 32");
  if (ecs_ipv6_prefix > 128) throw std::invalid_argument("ecs.ipv6_prefix must be <= 128");
  if (tcp_max_connections == 0) throw std::invalid_argument("tcp.max_connections must be > 0");
  if (upstream_max_in_flight == 0) throw std::invalid_argument("upstream_max_in_flight must be > 0");
  if (upstream_max_per_name == 0) throw std::invalid_argument("upstream_max_per_name must be > 0");
  if (upstream_health.down_after_timeouts == 0)
    throw std::invalid_argument("upstream_health.down_after_timeouts must be > 0");
  if (upstream_health.down_backoff_initial_ms == 0 ||
      upstream_health.down_backoff_max_ms < upstream_health.down_backoff_initial_ms)
    throw std::invalid_argument(
        "upstream_health: need 0 < down_backoff_initial_ms <= down_backoff_max_ms");
  if (rate_limit.ipv4_prefix > 32 || rate_limit.ipv6_prefix > 128)
    throw std::invalid_argument("rate_limit: ipv4_prefix <= 32, ipv6_prefix <= 128");
  if (backoff_initial_ms == 0 || backoff_max_ms < backoff_initial_ms)
    throw std::invalid_argument("restart: need 0 < backoff_initial_ms <= backoff_max_ms");
  if (heartbeat_timeout_ms != 0 && heartbeat_timeout_ms < 4 * 250)
    throw std::invalid_argument("restart.heartbeat_timeout_ms: 0 (off) or at least 1000 (4 heartbeats)");
  if (!dnstap.socket.empty() && !dnstap.file.empty())
    throw std::invalid_argument("dnstap: socket or file, not both");
  if (dnstap.socket.size() >= sizeof(sockaddr_un::sun_path))
    throw std::invalid_argument("dnstap.socket: a unix socket path has at most " +
                                std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  if (dnstap.queue < 2 || dnstap.queue > DnstapConfig::kMaxQueue)
    throw std::invalid_argument("dnstap.queue must be in [2, " + std::to_string(DnstapConfig::kMaxQueue) + "] frames");
  cache::SegmentLayout::compute(geometry);  // throws naming the bad parameter
  if (!metrics_listen.empty()) Endpoint::parse(metrics_listen);
  validate_tls(tls, listen);
  validate_https(https, tls, listen);
  validate_rpz_transfers(rpz_transfers);
  static const std::set<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (!kLogLevels.count(log_level))
    throw std::invalid_argument("log_level '" + log_level + "' is not trace, debug, info, warn, error, critical or off");
}

namespace {

using common::MapReader;

// A value that is not a plain YAML type (an endpoint, a size, a subnet rule, a policy):
// `parse` throws std::invalid_argument, reported at `n` as a config error for `key`.
template <class Parse>
auto parsed(const MapReader& r, const YAML::Node& n, const std::string& key, Parse&& parse) {
  if (!n.IsScalar()) r.fail_at(n, key, "expected a single value");
  try {
    return parse(n.Scalar());
  } catch (const std::invalid_argument& e) {
    r.fail_at(n, key, e.what());
  }
}

// One address:port or a list of them.
std::vector<Endpoint> endpoints(const MapReader& r, const YAML::Node& n, const std::string& key) {
  std::vector<Endpoint> out;
  if (n.IsScalar()) {
    out.push_back(parsed(r, n, key, Endpoint::parse));
  } else if (n.IsSequence()) {
    for (const auto& u : n) out.push_back(parsed(r, u, key, Endpoint::parse));
  } else {
    r.fail_at(n, key, "expected a list of address:port");
  }
  return out;
}

// Calls read(section) when the file has the mapping `key`, then rejects its unknown keys.
template <class Read>
void read_section(MapReader& r, const std::string& key, Read&& read) {
  if (!r.node()[key].IsDefined()) return;
  if (r.node()[key].IsNull()) r.fail(key, "expected a mapping of keys");
  MapReader section = r.map(key);
  read(section);
  section.finish();
}

template <class T>
T integer_or(MapReader& r, const std::string& key, T fallback, std::uint64_t max) {
  return static_cast<T>(r.integer_or(key, fallback, 0, max));
}

// A connection bound that, when absent, keeps `fallback` (0: inherit tcp.max_connections);
// written, it is 1 .. 65,536 (0 would be no connections at all, not "inherit").
unsigned positive_bound_or(MapReader& r, const std::string& key, unsigned fallback) {
  return static_cast<unsigned>(r.integer_or(key, fallback, 1, 65536));
}

std::uint64_t size_or(MapReader& r, const std::string& key, std::uint64_t fallback) {
  const YAML::Node n = r.raw(key);  // marks the key as read; null when absent
  return n.IsNull() ? fallback : parsed(r, n, key, parse_size);
}

UpstreamTransport transport_or(MapReader& r, const std::string& key, UpstreamTransport fallback) {
  const YAML::Node n = r.raw(key);
  return n.IsNull() ? fallback : parsed(r, n, key, parse_upstream_transport);
}

void read_upstreams(MapReader& r, ServeConfig& c) {
  if (const YAML::Node n = r.raw("upstreams"); !n.IsNull()) c.upstreams = endpoints(r, n, "upstreams");
  c.upstreams_trust_ad = r.boolean_or("upstreams_trust_ad", c.upstreams_trust_ad);
  c.upstreams_transport = transport_or(r, "upstreams_transport", c.upstreams_transport);
  c.upstreams_tls_auth_name = r.text_or("upstreams_tls_auth_name", c.upstreams_tls_auth_name);
  c.upstreams_tls_ca_file = r.text_or("upstreams_tls_ca_file", c.upstreams_tls_ca_file);
  const YAML::Node zones = r.raw("forward_zones");
  if (zones.IsNull()) return;
  if (!zones.IsSequence()) r.fail("forward_zones", "expected a list of {zone: NAME, upstreams: [address:port, ...]}");
  c.forward_zones.clear();
  for (const auto& item : zones) {
    MapReader z(r.file(), item, "forward_zones");
    const std::string zone = z.text_or("zone", "");
    const YAML::Node upstreams = z.raw("upstreams");
    std::vector<Endpoint> servers = upstreams.IsNull() ? std::vector<Endpoint>{} : endpoints(z, upstreams, "upstreams");
    const bool trust_ad = z.boolean_or("trust_ad", false);
    const UpstreamTransport transport = transport_or(z, "transport", UpstreamTransport::udp);
    const std::string auth_name = z.text_or("tls_auth_name", "");
    const std::string ca_file = z.text_or("tls_ca_file", "");
    z.finish();
    try {
      c.forward_zones.push_back(ForwardZone::make(zone, std::move(servers)));
      c.forward_zones.back().trust_ad = trust_ad;
      c.forward_zones.back().transport = transport;
      c.forward_zones.back().tls_auth_name = auth_name;
      c.forward_zones.back().tls_ca_file = ca_file;
    } catch (const std::invalid_argument& e) {
      r.fail_at(item, "forward_zones", e.what());
    }
  }
}

// private_address and private_domain: lists of strings (private_address.hpp).
void read_private_addresses(MapReader& r, ServeConfig& c) {
  std::vector<std::string> lists[2];
  const char* keys[2] = {"private_address", "private_domain"};
  YAML::Node nodes[2];
  for (int k = 0; k < 2; ++k) {
    nodes[k] = r.raw(keys[k]);
    if (nodes[k].IsNull()) continue;
    if (!nodes[k].IsSequence()) r.fail(keys[k], k == 0 ? "expected a list of subnets" : "expected a list of names");
    for (const auto& item : nodes[k]) {
      if (!item.IsScalar()) r.fail_at(item, keys[k], "expected a string");
      lists[k].push_back(item.as<std::string>());
    }
  }
  if (nodes[0].IsNull() && nodes[1].IsNull()) return;
  try {
    c.private_addresses = PrivateAddresses(lists[0], lists[1]);
  } catch (const PrivateAddresses::Error& e) {
    r.fail_at(nodes[e.domain ? 1 : 0], keys[e.domain ? 1 : 0], e.what());
  }
}

// dns64: {prefix, exclude, clients} (dns64.hpp); the section's presence turns it on.
void read_dns64(MapReader& r, ServeConfig& c) {
  read_section(r, "dns64", [&](MapReader& s) {
    Dns64Config& d = c.dns64;
    d.enabled = true;
    if (const YAML::Node n = s.raw("prefix"); !n.IsNull()) d.prefix = parsed(s, n, "prefix", Dns64Prefix::parse);
    auto subnets = [&](const char* key, std::vector<Subnet>& out, Subnet (*parse)(const std::string&)) {
      const YAML::Node n = s.raw(key);
      if (n.IsNull()) return;
      if (!n.IsSequence()) s.fail(key, "expected a list of subnets");
      out.clear();
      for (const auto& item : n) out.push_back(parsed(s, item, key, parse));
    };
    subnets("exclude", d.exclude, parse_dns64_exclude);
    subnets("clients", d.clients, Subnet::parse);
  });
}

void read_access_control(MapReader& r, ServeConfig& c) {
  const YAML::Node list = r.raw("access_control");
  if (list.IsNull()) return;
  if (!list.IsSequence()) r.fail("access_control", "expected a list of 'SUBNET allow|refuse|deny'");
  std::vector<AccessRule> rules;
  for (const auto& item : list) rules.push_back(parsed(r, item, "access_control", AccessRule::parse));
  c.access_control = AccessControl(std::move(rules));
}

// proxy_protocol_from: a list of subnets, at most kMaxProxySources (serve_config.hpp; the
// worker applies them: proxy_protocol.hpp).
void read_proxy_protocol_from(MapReader& r, ServeConfig& c) {
  const YAML::Node list = r.raw("proxy_protocol_from");
  if (list.IsNull()) return;
  if (!list.IsSequence()) r.fail("proxy_protocol_from", "expected a list of subnets");
  if (list.size() > kMaxProxySources)
    r.fail("proxy_protocol_from", "at most " + std::to_string(kMaxProxySources) + " subnets, got " +
                                      std::to_string(list.size()));
  for (const auto& item : list) c.proxy_protocol_from.push_back(parsed(r, item, "proxy_protocol_from", Subnet::parse));
}

// policy: local_zone and local_data (lists of strings), unblock_lan_zones, rpz (a list of
// {file, name}); a relative file is relative to the config file's directory.
void read_policy(MapReader& r, ServeConfig& c) {
  read_section(r, "policy", [&](MapReader& s) {
    auto strings = [&](const char* key, std::vector<std::string>& out) {
      const YAML::Node n = s.raw(key);
      if (n.IsNull()) return;
      if (!n.IsSequence()) s.fail(key, "expected a list of strings");
      for (const auto& item : n) {
        if (!item.IsScalar()) s.fail_at(item, key, "expected a string");
        out.push_back(item.as<std::string>());
      }
    };
    strings("local_zone", c.policy.local_zones);
    strings("local_data", c.policy.local_data);
    c.policy.unblock_lan_zones = s.boolean_or("unblock_lan_zones", c.policy.unblock_lan_zones);
    c.policy.watch_interval_ms =
        static_cast<unsigned>(s.integer_or("watch_interval_ms", c.policy.watch_interval_ms, 0, 3'600'000));
    if (c.policy.watch_interval_ms != 0 && c.policy.watch_interval_ms < 100)
      s.fail("watch_interval_ms", "expected 0 (off) or at least 100");
    if (const YAML::Node n = s.raw("notify_listen"); !n.IsNull())
      c.rpz_transfers.notify_listen = parsed(s, n, "notify_listen", [](const std::string& t) { return XfrAddress::parse(t, 53); });
    const YAML::Node rpz = s.raw("rpz");
    if (rpz.IsNull()) return;
    if (!rpz.IsSequence()) s.fail("rpz", "expected a list of {file: PATH, name: ZONE} or {zone: Z, primary: ADDR, file: PATH}");
    const std::filesystem::path dir = std::filesystem::path(r.file()).parent_path();
    for (const auto& item : rpz) {
      MapReader z(r.file(), item, "policy.rpz");
      if (z.has("primary")) {  // by zone transfer (rpz_transfer_config.hpp)
        c.rpz_transfers.zones.push_back(read_rpz_transfer(z, dir.string()));
        c.policy.rpz.push_back({c.rpz_transfers.zones.back().file, c.rpz_transfers.zones.back().zone, true});
        continue;
      }
      std::filesystem::path file = z.text("file");
      if (file.is_relative()) file = dir / file;
      c.policy.rpz.push_back({file.string(), z.text_or("name", "")});
      z.finish();
    }
  });
}

}  // namespace

ServeConfig load_serve_config(const std::string& path) {
  const YAML::Node root = common::load_yaml_file(path);
  ServeConfig c;
  if (root.IsNull()) return c;
  MapReader r(path, root, "");
  if (const YAML::Node n = r.raw("listen"); !n.IsNull()) {
    c.listen = endpoints(r, n, "listen");
    if (const std::string why = listen_problem(c.listen); !why.empty()) r.fail_at(n, "listen", why);
  }
  c.workers = integer_or(r, "workers", c.workers, 64);
  c.max_udp_size = static_cast<unsigned>(r.integer_or("max_udp_size", c.max_udp_size, 512, 4096));
  read_upstreams(r, c);
  c.upstream_timeout_ms = integer_or(r, "upstream_timeout_ms", c.upstream_timeout_ms, 60000);
  c.upstream_idle_timeout_ms = integer_or(r, "upstream_idle_timeout_ms", c.upstream_idle_timeout_ms, 3600000);
  c.upstream_attempts = integer_or(r, "upstream_attempts", c.upstream_attempts, 16);
  c.query_timeout_ms = static_cast<unsigned>(r.integer_or("query_timeout_ms", c.query_timeout_ms, 1, 600000));
  c.upstream_max_in_flight = integer_or(r, "upstream_max_in_flight", c.upstream_max_in_flight, 1u << 20);
  c.upstream_jostle_timeout_ms = integer_or(r, "upstream_jostle_timeout_ms", c.upstream_jostle_timeout_ms, 600000);
  c.upstream_max_per_name = integer_or(r, "upstream_max_per_name", c.upstream_max_per_name, 1u << 20);
  c.upstream_case_randomization = r.boolean_or("upstream_case_randomization", c.upstream_case_randomization);
  read_section(r, "upstream_health", [&](MapReader& s) {
    UpstreamHealthConfig& h = c.upstream_health;
    h.rtt_band_ms = integer_or(s, "rtt_band_ms", h.rtt_band_ms, 120000);
    h.down_after_timeouts = static_cast<unsigned>(s.integer_or("down_after_timeouts", h.down_after_timeouts, 1, 1000));
    h.down_backoff_initial_ms =
        static_cast<unsigned>(s.integer_or("down_backoff_initial_ms", h.down_backoff_initial_ms, 1, 3600000));
    h.down_backoff_max_ms = static_cast<unsigned>(s.integer_or("down_backoff_max_ms", h.down_backoff_max_ms, 1, 3600000));
  });
  read_section(r, "udp", [&](MapReader& s) {
    c.udp_receive_buffer = size_or(s, "receive_buffer", c.udp_receive_buffer);
    c.udp_send_buffer = size_or(s, "send_buffer", c.udp_send_buffer);
    c.udp_coalesce_us = integer_or(s, "coalesce_us", c.udp_coalesce_us, 1000);
  });
  read_access_control(r, c);
  read_proxy_protocol_from(r, c);
  read_section(r, "rate_limit", [&](MapReader& s) {
    RateLimitConfig& l = c.rate_limit;
    l.responses_per_second = integer_or(s, "responses_per_second", l.responses_per_second, 1u << 24);
    l.slip = integer_or(s, "slip", l.slip, 100);
    l.ipv4_prefix = integer_or(s, "ipv4_prefix", l.ipv4_prefix, 32);
    l.ipv6_prefix = integer_or(s, "ipv6_prefix", l.ipv6_prefix, 128);
    l.table_size = integer_or(s, "table_size", l.table_size, 1u << 24);
  });
  c.cookies = r.boolean_or("cookies", c.cookies);
  c.cookies_require = r.boolean_or("cookies_require", c.cookies_require);
  if (const YAML::Node n = r.raw("cookie_secret"); !n.IsNull())
    c.cookie_secret = parsed(r, n, "cookie_secret", parse_cookie_secret);
  read_section(r, "cache", [&](MapReader& s) {
    c.segment = s.text_or("segment", c.segment);
    c.geometry.max_entries = integer_or(s, "max_entries", c.geometry.max_entries, 1ull << 32);
    c.geometry.arena_bytes = size_or(s, "arena_bytes", c.geometry.arena_bytes);
    c.geometry.region_bytes = static_cast<std::uint32_t>(size_or(s, "region_bytes", c.geometry.region_bytes));
    c.reset_on_mismatch = s.boolean_or("reset_on_mismatch", c.reset_on_mismatch);
  });
  read_section(r, "ttl", [&](MapReader& s) {
    c.ttl_floor = integer_or(s, "floor", c.ttl_floor, 1u << 31);
    c.ttl_ceiling = integer_or(s, "ceiling", c.ttl_ceiling, 1u << 31);
    c.negative_ttl_ceiling = integer_or(s, "negative_ceiling", c.negative_ttl_ceiling, 1u << 31);
  });
  read_section(r, "stale", [&](MapReader& s) {
    c.stale_max_age_s = integer_or(s, "max_age_s", c.stale_max_age_s, 30u * 86400);
    c.stale_client_timeout_ms = integer_or(s, "client_timeout_ms", c.stale_client_timeout_ms, 600000);
    c.stale_answer_first = s.boolean_or("answer_first", c.stale_answer_first);
    c.stale_ttl_s = integer_or(s, "ttl_s", c.stale_ttl_s, 3600);
  });
  read_section(r, "failure_cache", [&](MapReader& s) {
    c.failure_min_s = integer_or(s, "min_s", c.failure_min_s, 86400);
    c.failure_max_s = integer_or(s, "max_s", c.failure_max_s, 86400);
  });
  read_section(r, "prefetch", [&](MapReader& s) { c.prefetch_percent = integer_or(s, "percent", c.prefetch_percent, 50); });
  read_section(r, "mrc", [&](MapReader& s) {
    c.mrc.enabled = s.boolean_or("enabled", c.mrc.enabled);
    c.mrc.sample_rate = s.number_or("sample_rate", c.mrc.sample_rate, 1e-9, 1.0);
    c.mrc.min_sampled_entries = integer_or(s, "min_sampled_entries", c.mrc.min_sampled_entries,
                                           MrcSettings::kMaxSampledEntriesLimit);
    c.mrc.max_sampled_entries = s.integer_or("max_sampled_entries", c.mrc.max_sampled_entries, 1,
                                             MrcSettings::kMaxSampledEntriesLimit);
    if (c.mrc.min_sampled_entries > c.mrc.max_sampled_entries)
      s.fail("min_sampled_entries", "must not exceed max_sampled_entries (" +
                                        std::to_string(c.mrc.max_sampled_entries) + "), got " +
                                        std::to_string(c.mrc.min_sampled_entries));
  });
  read_section(r, "ecs", [&](MapReader& s) {
    // Read as text: YAML would take a bare `off` for a boolean.
    if (const YAML::Node n = s.raw("policy"); !n.IsNull()) c.ecs_policy = parsed(s, n, "policy", parse_ecs_policy);
    c.ecs_ipv4_prefix = integer_or(s, "ipv4_prefix", c.ecs_ipv4_prefix, 32);
    c.ecs_ipv6_prefix = integer_or(s, "ipv6_prefix", c.ecs_ipv6_prefix, 128);
  });
  read_policy(r, c);
  read_section(r, "dnssec", [&](MapReader& s) {
    read_dnssec_config(s, std::filesystem::path(path).parent_path().string(), c.dnssec);
  });
  read_private_addresses(r, c);
  read_dns64(r, c);
  read_section(r, "tcp", [&](MapReader& s) {
    c.tcp_idle_timeout_ms = integer_or(s, "idle_timeout_ms", c.tcp_idle_timeout_ms, 3600000);
    c.tcp_max_connections = integer_or(s, "max_connections", c.tcp_max_connections, 65536);
    c.tcp_max_connections_per_client =
        integer_or(s, "max_connections_per_client", c.tcp_max_connections_per_client, 65536);
  });
  read_section(r, "tls", [&](MapReader& s) {
    if (const YAML::Node n = s.raw("listen"); !n.IsNull()) {
      c.tls.listen = endpoints(s, n, "listen");
      if (const std::string why = listen_problem(c.tls.listen); !why.empty()) s.fail_at(n, "listen", why);
    }
    c.tls.certificate = s.text_or("certificate", c.tls.certificate);
    c.tls.key = s.text_or("key", c.tls.key);
    c.tls.handshake_timeout_ms = integer_or(s, "handshake_timeout_ms", c.tls.handshake_timeout_ms, 600000);
    c.tls.max_handshakes = integer_or(s, "max_handshakes", c.tls.max_handshakes, 65536);
    c.tls.max_connections = positive_bound_or(s, "max_connections", c.tls.max_connections);
  });
  read_section(r, "https", [&](MapReader& s) {
    if (const YAML::Node n = s.raw("listen"); !n.IsNull()) {
      c.https.listen = endpoints(s, n, "listen");
      if (const std::string why = listen_problem(c.https.listen); !why.empty()) s.fail_at(n, "listen", why);
    }
    c.https.path = s.text_or("path", c.https.path);
    c.https.max_streams = integer_or(s, "max_streams", c.https.max_streams, 65536);
    c.https.max_connections = positive_bound_or(s, "max_connections", c.https.max_connections);
  });
  read_section(r, "stats", [&](MapReader& s) {
    if (!s.node()["metrics_listen"].IsDefined()) return;  // the default stays
    c.metrics_listen = s.text_or("metrics_listen", c.metrics_listen);
    if (!c.metrics_listen.empty()) parsed(s, s.node()["metrics_listen"], "metrics_listen", Endpoint::parse);
  });
  read_section(r, "restart", [&](MapReader& s) {
    c.backoff_initial_ms = integer_or(s, "backoff_initial_ms", c.backoff_initial_ms, 600000);
    c.backoff_max_ms = integer_or(s, "backoff_max_ms", c.backoff_max_ms, 600000);
    c.heartbeat_timeout_ms = integer_or(s, "heartbeat_timeout_ms", c.heartbeat_timeout_ms, 600000);
  });
  read_section(r, "dnstap", [&](MapReader& s) {
    DnstapConfig& d = c.dnstap;
    d.socket = s.text_or("socket", d.socket);
    d.file = s.text_or("file", d.file);
    d.client_query = s.boolean_or("client_query", d.client_query);
    d.client_response = s.boolean_or("client_response", d.client_response);
    d.forwarder_query = s.boolean_or("forwarder_query", d.forwarder_query);
    d.forwarder_response = s.boolean_or("forwarder_response", d.forwarder_response);
    d.identity = s.text_or("identity", d.identity);
    d.version = s.text_or("version", d.version);
    d.queue = integer_or(s, "queue", d.queue, DnstapConfig::kMaxQueue);
  });
  read_section(r, "recursion", [&](MapReader& s) { c.recursion.read(s, c.dnssec.anchors.get()); });  // after dnssec
  c.log_level = r.text_or("log_level", c.log_level);
  r.finish();
  return c;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/default_local_zones.hpp"

#include <set>
#include <sstream>

#include "policy/local_zone.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

constexpr const char* kSoa = " 10800 IN SOA localhost. nobody.invalid. 1 3600 1200 604800 10800";
constexpr const char* kIp6Loopback = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.";

// The AS112 zones (RFC 6303 and after), in Unbound's order (util/as112.c).
std::vector<std::string> as112_zones() {
  std::vector<std::string> z{"10.in-addr.arpa."};
  for (int i = 16; i <= 31; ++i) z.push_back(std::to_string(i) + ".172.in-addr.arpa.");
  z.push_back("168.192.in-addr.arpa.");
  z.push_back("0.in-addr.arpa.");
  for (int i = 64; i <= 127; ++i) z.push_back(std::to_string(i) + ".100.in-addr.arpa.");
  for (const char* n : {"254.169.in-addr.arpa.", "2.0.192.in-addr.arpa.", "100.51.198.in-addr.arpa.",
                        "113.0.203.in-addr.arpa.", "255.255.255.255.in-addr.arpa.",
                        "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.", "d.f.ip6.arpa.",
                        "8.e.f.ip6.arpa.", "9.e.f.ip6.arpa.", "a.e.f.ip6.arpa.", "b.e.f.ip6.arpa.",
                        "8.b.d.0.1.0.0.2.ip6.arpa."})
    z.push_back(n);
  return z;
}

// The zones that are not AS112 ones: localhost first, then the loopback reverse zones and
// the special-use names, as Unbound enters them.
const std::vector<std::string> kLocalZones = {"localhost.", "127.in-addr.arpa.", kIp6Loopback,
                                              "home.arpa.", "onion.",            "test.",
                                              "invalid."};

// `name` in lowercase wire form; empty when it is not a name.
WireName wire_of(const std::string& name) {
  try {
    const auto w = wire::name_to_wire(name);
    WireName n(w.begin(), w.end());
    wire::lowercase_copy(n.data(), {n.data(), n.size()});
    return n;
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

const std::vector<std::string>& default_local_zone_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = kLocalZones;
    for (std::string& z : as112_zones()) n.push_back(std::move(z));
    return n;
  }();
  return names;
}

void read_default_local_zones(const std::vector<std::string>& local_zones, bool unblock_lan_zones, RuleSet& rules) {
  std::set<WireName> defaults;
  for (const std::string& z : default_local_zone_names()) defaults.insert(wire_of(z));
  // The config's zones (a default of the same name is theirs) and its nodefault entries.
  // Malformed entries are left to read_local_config, which names them.
  std::set<WireName> taken;
  for (std::size_t i = 0; i < local_zones.size(); ++i) {
    std::istringstream in(local_zones[i]);
    std::string name, type;
    if (!(in >> name >> type)) continue;
    const WireName w = wire_of(name);
    if (w.empty()) continue;
    if (type == "nodefault" && !defaults.count(w))
      throw PolicyError("local_zone[" + std::to_string(i) + "] '" + local_zones[i] +
                        "': not a default local zone (localhost., test., onion., invalid., home.arpa., the loopback "
                        "and AS112 reverse zones)");
    taken.insert(w);
  }
  std::vector<std::string> zones, data;
  auto add = [&](const std::string& apex, const char* type, std::vector<std::string> extra) {
    if (taken.count(wire_of(apex))) return;
    zones.push_back(apex + " " + type);
    data.push_back(apex + kSoa);
    data.push_back(apex + " 10800 IN NS localhost.");
    for (std::string& rr : extra) data.push_back(std::move(rr));
  };
  add("localhost.", "redirect", {"localhost. 10800 IN A 127.0.0.1", "localhost. 10800 IN AAAA ::1"});
  add("127.in-addr.arpa.", "static", {"1.0.0.127.in-addr.arpa. 10800 IN PTR localhost."});
  add(kIp6Loopback, "static", {std::string(kIp6Loopback) + " 10800 IN PTR localhost."});
  for (std::size_t i = 3; i < kLocalZones.size(); ++i) add(kLocalZones[i], "static", {});
  if (!unblock_lan_zones)
    for (const std::string& z : as112_zones()) add(z, "static", {});
  if (zones.empty()) return;
  read_local_config("default", "built in", zones, data, rules);
}

}  // namespace dnsarena::policy

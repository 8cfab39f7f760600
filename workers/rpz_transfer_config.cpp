// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rpz_transfer_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "common/ip_address.hpp"
#include "common/yaml_reader.hpp"
#include "dns/knot_packet.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

XfrAddress XfrAddress::parse(const std::string& s, std::uint16_t default_port) {
  XfrAddress a;
  a.text = s;
  const std::size_t at = s.find('@');
  const std::string host = s.substr(0, at);
  unsigned long port = default_port;
  if (at != std::string::npos) {
    const std::string p = s.substr(at + 1);
    char* end = nullptr;
    port = std::strtoul(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || port == 0 || port > 65535)
      throw std::invalid_argument("'" + s + "': port '" + p + "' is not 1..65535");
  }
  a.len = common::ip_socket_address(host, static_cast<std::uint16_t>(port), a.addr);
  if (a.len == 0) throw std::invalid_argument("'" + s + "': '" + host + "' is not an IPv4 or IPv6 address");
  return a;
}

int make_tsig_key(const TsigConfig& c, knot_tsig_key_t& key) {
  key = {};
  if (!c.file.empty()) return knot_tsig_key_init_file(&key, c.file.c_str());
  return knot_tsig_key_init(&key, c.algorithm.c_str(), c.name.c_str(), c.secret.c_str());
}

namespace {

TsigConfig read_tsig(common::MapReader& parent, const std::string& dir) {
  common::MapReader t = parent.map("tsig");
  TsigConfig k;
  if (t.has("file")) {
    std::filesystem::path file = t.text("file");
    if (file.is_relative()) file = std::filesystem::path(dir) / file;
    k.file = file.string();
    knot_tsig_key_t key{};
    const int rc = knot_tsig_key_init_file(&key, k.file.c_str());
    if (rc != KNOT_EOK) t.fail("file", "'" + k.file + "': " + knot_strerror(rc));
    char* name = knot_dname_to_str_alloc(key.name);
    k.name = name ? name : "?";
    std::free(name);
    k.algorithm = dnssec_tsig_algorithm_to_name(key.algorithm);
    knot_tsig_key_deinit(&key);
  } else {
    k.name = t.text("name");
    k.algorithm = t.text_or("algorithm", "hmac-sha256");
    k.secret = t.text("secret");
    knot_tsig_key_t key{};
    const int rc = make_tsig_key(k, key);
    knot_tsig_key_deinit(&key);
    if (rc != KNOT_EOK) t.fail("secret", "key '" + k.name + "' (" + k.algorithm + "): " + knot_strerror(rc));
  }
  t.finish();
  return k;
}

}  // namespace

void validate_rpz_transfers(const RpzTransfers& t) {
  if (t.notify_listen.len && t.zones.empty())
    throw std::invalid_argument("policy.notify_listen: no policy.rpz entry has a primary to be notified about");
  for (std::size_t i = 0; i < t.zones.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      if (t.zones[i].zone == t.zones[j].zone)
        throw std::invalid_argument("policy.rpz: zone " + t.zones[i].zone + " is transferred twice");
      if (t.zones[i].file == t.zones[j].file)
        throw std::invalid_argument("policy.rpz: zones " + t.zones[j].zone + " and " + t.zones[i].zone +
                                    " share the file " + t.zones[i].file);
    }
}

RpzTransferConfig read_rpz_transfer(common::MapReader& r, const std::string& dir) {
  RpzTransferConfig c;
  const std::string zone = r.text("zone");
  try {
    c.zone = wire::wire_to_text(wire::name_to_wire(zone));
  } catch (const std::exception& e) {
    r.fail("zone", "'" + zone + "': " + e.what());
  }
  for (char& ch : c.zone) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.zone == ".") r.fail("zone", "the root cannot be a policy zone");
  try {
    c.primary = XfrAddress::parse(r.text("primary"), 53);
  } catch (const std::invalid_argument& e) {
    r.fail("primary", e.what());
  }
  std::filesystem::path file = r.text("file");
  if (file.is_relative()) file = std::filesystem::path(dir) / file;
  c.file = file.string();
  if (r.has("tsig")) c.tsig = read_tsig(r, dir);
  c.refresh_s = static_cast<unsigned>(r.integer_or("refresh", 0, 0, kMaxRefreshS));
  const YAML::Node from = r.raw("notify_from");
  if (!from.IsNull()) {
    if (!from.IsSequence()) r.fail("notify_from", "expected a list of subnets");
    for (const auto& item : from) {
      if (!item.IsScalar()) r.fail_at(item, "notify_from", "expected a subnet");
      try {
        c.notify_from.push_back(Subnet::parse(item.Scalar()));
      } catch (const std::invalid_argument& e) {
        r.fail_at(item, "notify_from", e.what());
      }
    }
  } else {
    // The primary's own address.
    const std::string host = c.primary.text.substr(0, c.primary.text.find('@'));
    c.notify_from.push_back(Subnet::parse(host));
  }
  c.max_records = r.integer_or("max_records", c.max_records, 1, 1'000'000'000);
  c.max_bytes = r.integer_or("max_bytes", c.max_bytes, 512, 64ull << 30);
  c.timeout_ms = static_cast<unsigned>(r.integer_or("timeout_ms", c.timeout_ms, 100, 3'600'000));
  r.finish();
  return c;
}

}  // namespace dnsarena::workers

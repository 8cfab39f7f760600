// SPDX-License-Identifier: GPL-3.0-or-later
// The `policy:` section of the serve config (workers/serve_config.hpp reads the YAML) and
// the one function that turns it into an image: the config's local zone first, then the
// default local zones the config leaves (default_local_zones.hpp), then each RPZ file in
// the order given (the first zone that matches a name wins).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "policy/rpz_reader.hpp"
#include "policy/rule_set.hpp"

namespace dnsarena::policy {

struct PolicyConfig {
  std::vector<std::string> local_zones;  // "NAME TYPE" (local_zone.hpp)
  std::vector<std::string> local_data;   // one record each, zone file syntax
  std::vector<RpzZoneConfig> rpz;
  // How often serve's supervisor looks at the RPZ files for a change to compile and swap
  // in without a SIGHUP (zone_file_watch.hpp); 0: only on SIGHUP.
  unsigned watch_interval_ms = 5000;
  // Leaves out the AS112 default local zones (default_local_zones.hpp), as Unbound's
  // unblock-lan-zones: their names are forwarded as any other.
  bool unblock_lan_zones = false;
  bool operator==(const PolicyConfig&) const = default;
};
bool operator==(const RpzZoneConfig& a, const RpzZoneConfig& b);

struct CompiledPolicy {
  std::vector<std::uint8_t> image;
  std::vector<ZoneReport> zones;
  std::size_t rules = 0;
};

// Reads every source and compiles them. Throws PolicyError ("FILE:LINE: what").
CompiledPolicy compile_policy_config(const PolicyConfig& cfg);

}  // namespace dnsarena::policy

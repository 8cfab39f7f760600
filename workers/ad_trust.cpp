// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/ad_trust.hpp"

#include <vector>

namespace dnsarena::workers {

namespace {

// The trust of the longest zone of `zones` holding `name` (wire form); false in none.
bool trusted(const std::vector<ForwardZone>& zones, const std::uint8_t* name) {
  const ForwardZone* best = nullptr;
  for (const ForwardZone& z : zones)
    if (z.contains(name) && (!best || z.name.size() > best->name.size())) best = &z;
  return best && best->trust_ad;
}

}  // namespace

bool trusts_every_name(const ServeConfig& cfg) {
  const std::vector<ForwardZone> zones = cfg.zones();
  bool root = false;
  for (const ForwardZone& z : zones) {
    if (!z.trust_ad) return false;
    root = root || z.name.size() == 1;
  }
  return root;
}

bool ad_trust_revoked(const ServeConfig& before, const ServeConfig& after) {
  // A name's trust is its longest zone's. For a name whose trust differs, the longer of
  // its two zones (before, after) is a zone apex whose trust differs the same way: so
  // looking at every apex of both configs finds every such name.
  const std::vector<ForwardZone> old_zones = before.zones();
  const std::vector<ForwardZone> new_zones = after.zones();
  for (const auto* zones : {&old_zones, &new_zones})
    for (const ForwardZone& z : *zones)
      if (trusted(old_zones, z.name.c_str()) && !trusted(new_zones, z.name.c_str())) return true;
  return false;
}

}  // namespace dnsarena::workers

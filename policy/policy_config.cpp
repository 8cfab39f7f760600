// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/policy_config.hpp"

#include "policy/default_local_zones.hpp"
#include "policy/local_zone.hpp"
#include "policy/policy_compiler.hpp"

namespace dnsarena::policy {

bool operator==(const RpzZoneConfig& a, const RpzZoneConfig& b) { return a.file == b.file && a.name == b.name && a.transferred == b.transferred; }

CompiledPolicy compile_policy_config(const PolicyConfig& cfg) {
  RuleSet rules;
  if (!cfg.local_zones.empty() || !cfg.local_data.empty())
    read_local_config("local", "config", cfg.local_zones, cfg.local_data, rules);
  read_default_local_zones(cfg.local_zones, cfg.unblock_lan_zones, rules);
  for (const RpzZoneConfig& z : cfg.rpz) read_rpz_file(z, rules);
  CompiledPolicy c;
  c.image = compile_policy(rules);
  c.zones = rules.zones();
  c.rules = rules.rules().size();
  return c;
}

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/kresd_config.hpp"

#include <sstream>

namespace dnsarena::bench {

std::string kresd_config_text(const KresdConfig& k) {
  std::ostringstream c;
  c << "net.listen('127.0.0.1', " << k.dns_port << ", { kind = 'dns' })\nnet.ipv6 = false\n";
  if (k.dot_port || k.doh_port) c << "net.tls('" << k.cert << "', '" << k.key << "')\n";
  if (k.dot_port) c << "net.listen('127.0.0.1', " << k.dot_port << ", { kind = 'tls' })\n";
  if (k.doh_port) c << "net.listen('127.0.0.1', " << k.doh_port << ", { kind = 'doh2' })\n";
  for (const std::string& line : k.extra) c << line << "\n";
  c << "cache.open(" << k.cache_mib << " * MB, 'lmdb://" << k.dir << "/kresd-cache')\ntrust_anchors.remove('.')\n"
    << "modules.unload('ta_update')\nmodules.unload('priming')\nmodules.unload('detect_time_skew')\n";
  if (!k.rpz_path.empty()) c << "policy.add(policy.rpz(policy.DENY, '" << k.rpz_path << "', false))\n";
  if (k.root_hints.empty())
    c << "policy.add(policy.all(policy.FORWARD('127.0.0.1@" << k.upstream_port << "')))\n";
  else
    c << "modules.load('hints')\nhints.root_file('" << k.root_hints << "')\n"
      << "policy.add(policy.all(policy.FLAGS('ALLOW_LOCAL')))  -- the hierarchy is on 127.0.0.0/8\n";
  return c.str();
}

}  // namespace dnsarena::bench

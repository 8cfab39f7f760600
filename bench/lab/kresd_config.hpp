// SPDX-License-Identifier: GPL-3.0-or-later
// Knot Resolver (kresd, one process) as the lab benches run it (bench serve, bench
// tls-idle): a forwarding cache to the synthetic upstream (or, given root hints, a
// recursive resolver from them), its LMDB cache in the scratch
// directory, no DNSSEC (the synthetic zone is unsigned; the root trust anchor would make
// it bogus), no background modules that query the Internet. The config's Lua text; the
// bench writes it to a file and starts `kresd -n -c FILE RUNDIR`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::bench {

struct KresdConfig {
  std::string dir;          // the cache goes in DIR/kresd-cache
  unsigned cache_mib = 128;
  std::uint16_t dns_port = 0;  // plain DNS (UDP and TCP)
  std::uint16_t dot_port = 0;  // 0: no DoT listener
  std::uint16_t doh_port = 0;  // 0: no DoH listener (doh2)
  std::string cert, key;       // presented over DoT and DoH
  std::uint16_t upstream_port = 0;
  std::string root_hints;      // "": forward to upstream_port; else resolve from these root hints
  std::string rpz_path;        // "": none; else `CNAME .` answered NXDOMAIN (policy.DENY), file not watched
  std::vector<std::string> extra;  // more Lua lines, after the listeners (net.tcp_in_idle(...))
};

std::string kresd_config_text(const KresdConfig& k);

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// The zones every resolver answers itself (RFC 6761, RFC 6303, RFC 7686, RFC 8375), as
// Unbound 1.17 enters them by default (services/localzone.c, util/as112.c) and with the
// same records, so a client gets the same answer from either:
//
//   localhost.                 redirect: A 127.0.0.1 and AAAA ::1 for it and every name
//                              below it; other types NODATA
//   127.in-addr.arpa.          static: 1.0.0.127.in-addr.arpa. PTR localhost.
//   1.0.0...0.ip6.arpa. (::1)  static: its PTR localhost.
//   home.arpa. onion. test. invalid.
//                              static, empty
//   the AS112 zones            static, empty: the RFC 1918 reverse zones (10., 16-31.172.,
//                              168.192.), 0., 64-127.100. (RFC 6598), 254.169., the
//                              documentation nets, 255.255.255.255., ::, d.f. (ULA),
//                              8-b.e.f. (link-local), 8.b.d.0.1.0.0.2. (documentation)
//
// Each has SOA "localhost. nobody.invalid. 1 3600 1200 604800 10800" and NS localhost. at
// its apex, TTL 10800: the apex answers SOA and NS, a name below it without data is
// NXDOMAIN, other types of a name with data NODATA.
//
// The config changes them as Unbound's does:
//   local_zone "NAME TYPE"   a zone of the config with a default zone's name replaces it
//                            (its records too): "10.in-addr.arpa. transparent" forwards
//                            the zone's names as any other
//   local_zone "NAME nodefault"
//                            drops the default zone NAME (an error for a name that is not
//                            one of them)
//   unblock_lan_zones: true  drops the AS112 zones (Unbound's unblock-lan-zones)
// They are compiled as a policy zone of their own, "default", after the config's local
// zone and before the RPZ files: a deeper zone of the config wins in the lookup.
#pragma once
#include <string>
#include <vector>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

// The default zone names, lowercase, with their trailing dot (the AS112 ones included).
const std::vector<std::string>& default_local_zone_names();

// Opens the policy zone "default" in `rules` and adds the default zones left after the
// config's `local_zones` entries and `unblock_lan_zones`; opens nothing when none is left.
// Throws PolicyError "local_zone[i] 'NAME nodefault': ..." for a nodefault entry whose
// name is not a default zone.
void read_default_local_zones(const std::vector<std::string>& local_zones, bool unblock_lan_zones, RuleSet& rules);

}  // namespace dnsarena::policy

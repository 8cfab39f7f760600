// SPDX-License-Identifier: GPL-3.0-or-later
// The config's local_zone and local_data entries (Unbound's local-zone: / local-data:)
// as one policy zone, the first: it is consulted before the default local zones
// (default_local_zones.hpp, read by the same code) and every RPZ file.
//
//   local_zone "NAME TYPE"   rules for NAME and every name below it:
//     static           local data answers; any other name below: NXDOMAIN (NODATA for a
//                      name with data of other types)
//     transparent      local data answers; other names resolve as usual (no rule)
//     refuse           local data answers; other names: REFUSED
//     deny             local data answers; other queries are dropped
//     redirect         the apex's local data answers every name below it
//     always_nxdomain  NXDOMAIN, local data ignored
//     always_nodata    NODATA, local data ignored
//     always_refuse    REFUSED, local data ignored
//     always_deny      dropped, local data ignored
//   local_data "RR"          a record in zone file syntax ("www.example. 300 A 192.0.2.1");
//                            a name with local data but no local_zone is transparent, as
//                            in Unbound.
//   local_zone "NAME nodefault"  no zone here: it drops the default local zone NAME
//                            (default_local_zones.hpp, which checks the name).
// Any other type (typetransparent, inform, ...) is refused with the entry.
#pragma once
#include <string>
#include <vector>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

// Opens the policy zone `zone` (the config's: "local", from `source` "config") in `rules`
// and adds the entries. Throws PolicyError "local_zone[i]: ..." / "local_data[i]:1: ...".
void read_local_config(const std::string& zone, const std::string& source, const std::vector<std::string>& local_zones,
                       const std::vector<std::string>& local_data, RuleSet& rules);

}  // namespace dnsarena::policy

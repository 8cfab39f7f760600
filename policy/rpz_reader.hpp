// SPDX-License-Identifier: GPL-3.0-or-later
// Reads a Response Policy Zone (RPZ, draft-vixie-dnsop-dns-rpz) into a RuleSet: QNAME
// triggers only.
//
//   owner (relative to the zone)   trigger
//   name                           the query name `name` exactly
//   *.name                         every name below `name` (not `name` itself)
//
//   record at the trigger          action
//   CNAME .                        NXDOMAIN
//   CNAME *.                       NODATA
//   CNAME rpz-passthru.            PASSTHRU: answered as without policy
//   CNAME rpz-drop.                DROP: no answer
//   any other RRset                local data (a CNAME to a walled garden included)
//
// Skipped, counted in ZoneReport::unsupported and logged once per zone with the first
// owner: triggers under rpz-ip, rpz-nsip, rpz-nsdname, rpz-client-ip (the zone's own
// labels for other trigger kinds), the action CNAME rpz-tcp-only., and CNAME *.target
// (the rewrite to qname.target). The apex records (SOA, NS) are the zone's, not rules.
#pragma once
#include <string>
#include <string_view>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

struct RpzZoneConfig {
  std::string file;
  std::string name;  // the zone's origin; empty: the owner of the file's first record (its SOA)
};

// Opens a policy zone in `rules` and reads the file into it. Throws PolicyError "FILE:LINE: ...".
void read_rpz_file(const RpzZoneConfig& zone, RuleSet& rules);
// The same from text (tests, the fuzz target). `source` names it in errors.
void read_rpz_text(std::string_view text, const std::string& source, const std::string& origin, RuleSet& rules);

}  // namespace dnsarena::policy

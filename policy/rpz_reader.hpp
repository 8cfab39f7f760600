// SPDX-License-Identifier: GPL-3.0-or-later
// Reads a Response Policy Zone (RPZ, draft-vixie-dnsop-dns-rpz) into a RuleSet.
//
//   owner (relative to the zone)   trigger
//   name                           the query name `name` exactly (and every name of
//                                  an answer's CNAME chain, answer_chain.hpp)
//   *.name                         every name below `name` (not `name` itself)
//   P.w.z.y.x.rpz-ip               an answer's A record in x.y.z.w/P
//   P.g1.g2...rpz-ip               an answer's AAAA in the IPv6 prefix, groups lowest first,
//                                  "zz" for one run of zero groups (128.1.zz.db8.2001:
//                                  2001:db8::1/128)
//   ... .rpz-client-ip             the client's address, the same forms
//
//   record at the trigger          action
//   CNAME .                        NXDOMAIN
//   CNAME *.                       NODATA
//   CNAME rpz-passthru.            PASSTHRU: answered as without policy
//   CNAME rpz-drop.                DROP: no answer
//   any other RRset                local data (a CNAME to a walled garden included)
//
// Skipped, counted in ZoneReport::unsupported and logged once per zone with the first
// owner: triggers under rpz-nsip and rpz-nsdname (a forwarder does not see the
// resolution's name servers), malformed address triggers (a prefix past 32 / 128, an
// octet past 255, a second "zz"), the action CNAME rpz-tcp-only., and CNAME *.target (the
// rewrite to qname.target). The apex SOA is the zone's: its negative answers carry it
// (policy_answer.hpp); the apex NS is not a rule.
#pragma once
#include <string>
#include <string_view>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

struct RpzZoneConfig {
  std::string file;
  std::string name;  // the zone's origin; empty: the owner of the file's first record (its SOA)
  // The file is the copy a zone transfer keeps (workers/rpz_transfer_process.hpp): until
  // the first transfer writes it, a missing file is an empty zone, not an error; a delta
  // beside it made for that copy is applied (rpz_copy_delta.hpp).
  bool transferred = false;
};

// Opens a policy zone in `rules` and reads the file into it. Throws PolicyError "FILE:LINE: ...".
void read_rpz_file(const RpzZoneConfig& zone, RuleSet& rules);
// The same from text (tests, the fuzz target). `source` names it in errors.
void read_rpz_text(std::string_view text, const std::string& source, const std::string& origin, RuleSet& rules);

}  // namespace dnsarena::policy

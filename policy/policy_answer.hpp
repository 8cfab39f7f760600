// SPDX-License-Identifier: GPL-3.0-or-later
// The answer a matched rule gives, written straight into the worker's output buffer. It
// never touches the cache: policy answers are not upstream answers.
//
//   action       rcode     answer section                          EDE (EDNS clients only)
//   nxdomain     NXDOMAIN  -                                       15 Blocked
//   nodata       NOERROR   -                                       15 Blocked
//   refuse       REFUSED   -                                       18 Prohibited
//   drop         (no answer)
//   passthru     (not decided: the query goes on to the cache and upstream)
//   local_data   NOERROR   a CNAME at the name (any query type),   17 Filtered
//                          else the records of the query type
//                          (all for ANY), else none (NODATA)
// The mapping follows Knot Resolver (policy.DENY: Blocked, policy.REFUSE: Prohibited,
// answers rewritten by policy: Filtered). Records are owned by the query name (a
// compression pointer to the question), so a `*.` rule's data answers in the asker's
// name. A CNAME is followed by the worker for other query types than CNAME and ANY
// (workers/local_alias.hpp): its target's answer is added. An answer over the
// client's size limit is sent empty with TC.
//
// Negative answers (NXDOMAIN, and NODATA whether from the action or from local data
// without the type) carry the zone's SOA in the authority section so that a downstream
// resolver caches them (RFC 2308 section 3), with the TTL min(SOA TTL, SOA MINIMUM), as
// BIND's RPZ does (Unbound 1.17's sends none): an RPZ file's apex SOA owned by its
// origin; for the config's local zone, the SOA among the local data of the trigger's name
// (the zone's apex for a `*.` rule), as Unbound's local zones do. A zone without one
// answers without.
//
// The same records end an answer the rule rewrote further down a CNAME chain
// (answer_chain.hpp): the chain up to the matched name stays, the rule's records follow.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dns/client_query.hpp"
#include "policy/policy_view.hpp"

namespace dnsarena::policy {

struct PolicyAnswer {
  bool decided = false;  // false: passthru, answer as without policy
  std::size_t size = 0;  // 0 with decided: drop
};

// REQUIRES: `m` a match of `view`; `limit` <= `cap`, the client's answer size limit.
PolicyAnswer write_policy_answer(const PolicyView& view, const Match& m, const dns::ClientQuery& q, std::size_t limit,
                                 std::uint8_t* out, std::size_t cap);

// The rule's records added to a message in out[0, size) that ends with its answer section
// (ANCOUNT records), or with an OPT record at `opt_at` (size: no OPT) and nothing else in
// authority or additional: the local data of the query type owned by the matched name,
// then the zone's SOA for a negative answer. The owner is a compression pointer to
// `owner_at` (below 0x4000), else (0) `owner` written in full. Over `limit`: nothing is
// added and TC is set. Returns the new size. REQUIRES: `m` a match whose action is
// nxdomain, nodata or local_data; out has `cap` bytes.
std::size_t add_rule_records(const PolicyView& view, const Match& m, std::uint16_t qtype, std::size_t owner_at,
                             std::span<const std::uint8_t> owner, std::uint8_t* out, std::size_t size,
                             std::size_t opt_at, std::size_t limit, std::size_t cap);

}  // namespace dnsarena::policy

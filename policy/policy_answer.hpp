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
// name. A CNAME is not followed: the client asks for its target. An answer over the
// client's size limit is sent empty with TC.
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

// REQUIRES: `m` a match; `limit` <= `cap`, the client's answer size limit.
PolicyAnswer write_policy_answer(const Match& m, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                                 std::size_t cap);

}  // namespace dnsarena::policy

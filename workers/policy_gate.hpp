// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's steps into the response policy (policy/):
//   before the cache   the query name and the client's address (apply_policy): a name no
//                      rule matches costs the lookup alone (policy_view.hpp), the address
//                      nothing unless rpz-client-ip triggers are compiled; a match is
//                      counted and, unless PASSTHRU, answered here, never from or into
//                      the cache. Between a name and a client rule the lower zone wins,
//                      in one zone the client rule (RPZ's precedence)
//   every answer       the names of its CNAME chain and its addresses (apply_answer_policy,
//                      policy/answer_chain.hpp), once written for the client: a cache hit,
//                      a stale answer, an upstream answer. An answer without a CNAME or
//                      DNAME costs a walk over its records' types, no lookup (with rpz-ip
//                      triggers: one probe per address and prefix length). A PASSTHRU for
//                      the query name or the client exempts the answer
// The cache keeps the upstream's answer as it came: the chain is checked on every answer
// written from it, so a rule loaded later applies to what was cached before.
//
// The image is the supervisor's sealed mapping, inherited at fork (policy/sealed_image.hpp):
// a reload compiles a new one and the workers forked for the new config get it, while the
// retiring ones finish on the old mapping, which the kernel frees with the last of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include <sys/socket.h>

#include "cache/cache.hpp"
#include "workers/answer_metrics.hpp"
#include "dns/client_query.hpp"
#include "policy/answer_chain.hpp"
#include "policy/policy_view.hpp"

namespace dnsarena::workers {

class DnstapWriter;  // dnstap_writer.hpp

// What the policy did to one answer, for logs (dnstap's Policy message) and counters.
// `trigger` points into the image (the rule's name, lowercase wire form; a `*.` rule's
// parent with `wildcard`; for the address kinds, the 17-byte key of policy_image.hpp:
// prefix length, address), valid while the worker runs.
struct PolicyHit {
  enum class Kind : std::uint8_t {
    none,         // no rule matched
    qname,        // the query name (before the cache)
    cname_chain,  // a name the answer's CNAME or DNAME chain leads to (a QNAME trigger)
    response_ip,  // an address in the answer (rpz-ip)
    client_ip,    // the client's address (rpz-client-ip)
  };  // kind - 1: the policy counters' kind (policy_counters.hpp: kPolicyKindNames)
  Kind kind = Kind::none;
  policy::Action action = policy::Action::passthru;
  bool decided = false;  // the rule answered (false: PASSTHRU, the answer as without policy)
  std::uint8_t zone = 0;  // the policy zone's index (PolicyView::zone: its origin)
  bool wildcard = false;
  std::span<const std::uint8_t> trigger;
};

// True when the policy decided the query: `size` is the answer's size (0: no answer).
// False: no rule, or PASSTHRU; the query goes on to the cache. `hit` says which rule.
// Every match is counted in the stat slot (`cache`: policy_hits and its action) and per
// zone and trigger kind (`meter`: policy_counters.hpp).
// Inline: a query whose name no trigger can match, from a policy without rpz-client-ip
// triggers (most queries), costs PolicyView::may_match alone.
bool check_query_policy(const policy::PolicyView& view, const dns::ClientQuery& q, const sockaddr_storage& client,
                        std::size_t limit, std::uint8_t* out, std::size_t cap, cache::Cache& cache, AnswerMeter& meter,
                        std::size_t& size, PolicyHit& hit, DnstapWriter* tap = nullptr);
inline bool apply_policy(const policy::PolicyView& view, const dns::ClientQuery& q, const sockaddr_storage& client,
                         std::size_t limit, std::uint8_t* out, std::size_t cap, cache::Cache& cache,
                         AnswerMeter& meter, std::size_t& size, PolicyHit& hit, DnstapWriter* tap = nullptr) {
  if (!view.may_match(q.qname()) && !view.has_address_triggers(policy::TriggerKind::client_ip)) {
    hit = {};
    return false;
  }
  return check_query_policy(view, q, client, limit, out, cap, cache, meter, size, hit, tap);
}

// The answer in out[0, size) written for `q` from `client` (nullptr: not known) checked
// along its chain; returns the size to send (rewritten, or 0: dropped). `hit` says which
// rule matched, and is left as it was when none did. Inline: an answer with nothing to
// look up (policy/answer_chain.hpp: answer_needs_check) costs its walk alone.
std::size_t check_answer_policy(const policy::PolicyView& view, const dns::ClientQuery& q,
                                const sockaddr_storage* client, std::size_t limit, std::uint8_t* out, std::size_t size,
                                std::size_t cap, cache::Cache& cache, AnswerMeter& meter, PolicyHit& hit,
                                DnstapWriter* tap = nullptr);
inline std::size_t apply_answer_policy(const policy::PolicyView& view, const dns::ClientQuery& q,
                                       const sockaddr_storage* client, std::size_t limit, std::uint8_t* out,
                                       std::size_t size, std::size_t cap, cache::Cache& cache, AnswerMeter& meter,
                                       PolicyHit& hit, DnstapWriter* tap = nullptr) {
  if (!policy::answer_needs_check(view, out, size, q.qname_len)) return size;
  return check_answer_policy(view, q, client, limit, out, size, cap, cache, meter, hit, tap);
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The policy's local CNAME followed (query_pipeline.hpp, workers/local_alias.hpp): a
// local data answer that is a CNAME for the query name leads to its target, asked with
// the client's type, class, EDNS, DO and CD; a target with a policy answer of its own
// (local data, or any other rule) is answered by the policy, another local CNAME followed
// in turn (at most kMaxLocalCnames), any other name goes through stages 3-5 as a query of
// its own (a hit, stale, the upstream with coalescing). The client gets the local CNAME
// records, then the target's answer, in its own question.
#include <algorithm>
#include <memory>

#include "policy/policy_answer.hpp"
#include "wire/constants.hpp"
#include "workers/local_alias.hpp"
#include "workers/query_pipeline.hpp"

namespace dnsarena::workers {

std::size_t QueryPipeline::follow_local_cname(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                              std::uint8_t* out, std::size_t cap) {
  LocalCname link = first_local_cname(out, c.size);
  if (!link.found) return c.size;  // NODATA, or sent empty with TC: as written
  auto alias = std::make_shared<LocalAlias>();
  alias->client = q;
  dns::ClientQuery target = q;  // the target's question: the client's type, class, flags and EDNS
  std::uint8_t* step = alias_buf_.data();
  std::size_t n = 0;
  for (unsigned links = 0;; ++links) {
    if (links == kMaxLocalCnames) {  // a loop, or a chain longer than any real one
      cache_.count(cache::Counter::servfail);
      return dns::write_error_response(q, wire::kRcodeServFail, out, cap);
    }
    alias->add(target.qname(), link.ttl, {link.target, link.target_len});
    std::copy(link.target, link.target + link.target_len, target.qname_storage.begin());
    target.qname_len = static_cast<std::uint8_t>(link.target_len);
    const policy::Match m = policy_->find(target.qname());
    if (!m || m.action == policy::Action::passthru) {
      // Stages 3-5 for the target; a client that waits carries its alias (forward()).
      alias->check_target = !m;
      // Written into out and composed back there: a dnstap mark (a stale answer) names
      // the buffer and the ID, which the client's answer keeps.
      forwarding_alias_ = alias;
      n = resolve(target, c, src, nullptr, out, cap);
      forwarding_alias_.reset();
      if (n == 0) return 0;  // the client waits (answered_later()), or gets nothing
      n = finish_alias(*alias, target, src.addr, c.limit, out, n, step, cap);
      std::copy(step, step + n, out);
      return n;
    }
    // A rule decided the target: its answer (the policy decided every name up to here).
    const policy::PolicyAnswer a = policy::write_policy_answer(*policy_, m, target, c.limit, step, cap);
    if (a.size == 0) return 0;  // dropped
    n = a.size;
    link = first_local_cname(step, n);
    if (!link.found) break;
  }
  return write_alias(*alias, step, n, out, c.limit, cap);
}

std::size_t QueryPipeline::write_alias(const LocalAlias& alias, const std::uint8_t* target, std::size_t n,
                                       std::uint8_t* out, std::size_t limit, std::size_t cap) {
  n = write_alias_answer(alias, target, n, out, limit, cap);
  if (n) return n;
  cache_.count(cache::Counter::servfail);
  return dns::write_error_response(alias.client, wire::kRcodeServFail, out, cap);
}

std::size_t QueryPipeline::finish_alias(const LocalAlias& alias, const dns::ClientQuery& target_query,
                                        const sockaddr_storage* client, std::size_t limit, std::uint8_t* target,
                                        std::size_t n, std::uint8_t* out, std::size_t cap) {
  // The policy on the rest of the chain, from the target on, as on any answer the
  // pipeline writes (a rule there rewrites the target's part; the local CNAMEs stay).
  if (alias.check_target) n = answer_policy(target_query, client, limit, target, n, cap);
  if (n == 0) return 0;  // dropped by a rule
  return write_alias(alias, target, n, out, limit, cap);
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/policy_gate.hpp"

#include "policy/policy_answer.hpp"

namespace dnsarena::workers {

bool apply_policy(const policy::PolicyView& view, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                  std::size_t cap, cache::Cache& cache, std::size_t& size) {
  const policy::Match m = view.find(q.qname());
  if (!m) return false;
  cache.count(cache::Counter::policy_hits);
  const policy::PolicyAnswer a = policy::write_policy_answer(m, q, limit, out, cap);
  switch (m.action) {
    case policy::Action::passthru: cache.count(cache::Counter::policy_passthru); break;
    case policy::Action::drop: cache.count(cache::Counter::policy_dropped); break;
    case policy::Action::local_data: cache.count(cache::Counter::policy_local_data); break;
    default: cache.count(cache::Counter::policy_blocked); break;
  }
  size = a.size;
  return a.decided;
}

}  // namespace dnsarena::workers

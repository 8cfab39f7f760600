// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/policy_gate.hpp"

#include "policy/policy_answer.hpp"
#include "workers/dnstap_encoder.hpp"
#include "workers/dnstap_writer.hpp"

namespace dnsarena::workers {

namespace {

// The schema's Policy.Action of a decided policy answer (0: none; REFUSED has none).
std::uint8_t tap_action(policy::Action a) {
  switch (a) {
    case policy::Action::nxdomain: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::nxdomain);
    case policy::Action::nodata: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::nodata);
    case policy::Action::local_data: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::local_data);
    default: return 0;
  }
}

}  // namespace

bool apply_policy(const policy::PolicyView& view, const dns::ClientQuery& q, std::size_t limit, std::uint8_t* out,
                  std::size_t cap, cache::Cache& cache, std::size_t& size, DnstapWriter* tap) {
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
  if (tap && a.decided && a.size)
    tap->mark_policy(out, q.id, m.zone, tap_action(m.action),
                     {m.record + sizeof(policy::RuleRecordHead), m.record[0]}, m.wildcard, q.qname());
  return a.decided;
}

}  // namespace dnsarena::workers

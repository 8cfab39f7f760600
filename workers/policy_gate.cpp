// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/policy_gate.hpp"

#include <netinet/in.h>

#include <cstring>

#include "policy/answer_chain.hpp"
#include "policy/policy_answer.hpp"
#include "workers/dnstap_encoder.hpp"
#include "workers/dnstap_writer.hpp"

namespace dnsarena::workers {

namespace {

using policy::Action, policy::Match, policy::TriggerKind;

void count(cache::Cache& cache, AnswerMeter& meter, const Match& m, PolicyHit::Kind kind) {
  meter.policy_hit(m.zone, static_cast<unsigned>(kind) - 1);
  cache.count(cache::Counter::policy_hits);
  switch (m.action) {
    case Action::passthru: cache.count(cache::Counter::policy_passthru); break;
    case Action::drop: cache.count(cache::Counter::policy_dropped); break;
    case Action::local_data: cache.count(cache::Counter::policy_local_data); break;
    default: cache.count(cache::Counter::policy_blocked); break;
  }
}

// The schema's Policy.Action of a decided policy answer (0: none; REFUSED has none).
std::uint8_t tap_action(Action a) {
  switch (a) {
    case Action::nxdomain: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::nxdomain);
    case Action::nodata: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::nodata);
    case Action::local_data: return static_cast<std::uint8_t>(dnstap_wire::PolicyAction::local_data);
    default: return 0;
  }
}

// Marks a decided answer for dnstap (dnstap_writer.hpp, mark_policy). The rule is the
// trigger's name for the name kinds; an address trigger's key is no name: none is given.
void tap_mark(DnstapWriter* tap, const PolicyHit& hit, const dns::ClientQuery& q, std::uint8_t* out,
              std::size_t size) {
  if (!tap || !hit.decided || size == 0) return;
  const bool name = hit.kind == PolicyHit::Kind::qname || hit.kind == PolicyHit::Kind::cname_chain;
  tap->mark_policy(out, q.id, hit.zone, tap_action(hit.action), name ? hit.trigger : std::span<const std::uint8_t>{},
                   hit.wildcard, q.qname());
}

PolicyHit hit_of(const Match& m, PolicyHit::Kind kind, bool decided) {
  return {kind, m.action, decided, m.zone, m.wildcard, policy::PolicyView::trigger(m)};
}

// The rpz-client-ip rule for `client` (none without such triggers or for a family other
// than IPv4 and IPv6).
Match client_rule(const policy::PolicyView& view, const sockaddr_storage* client) {
  if (!client || !view.has_address_triggers(TriggerKind::client_ip)) return {};
  std::uint8_t a16[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};  // IPv4 as ::ffff:a.b.c.d
  if (client->ss_family == AF_INET)
    std::memcpy(a16 + 12, &reinterpret_cast<const sockaddr_in*>(client)->sin_addr, 4);
  else if (client->ss_family == AF_INET6)
    std::memcpy(a16, &reinterpret_cast<const sockaddr_in6*>(client)->sin6_addr, 16);
  else
    return {};
  return view.find_address(TriggerKind::client_ip, a16);
}

}  // namespace

bool check_query_policy(const policy::PolicyView& view, const dns::ClientQuery& q, const sockaddr_storage& client,
                        std::size_t limit, std::uint8_t* out, std::size_t cap, cache::Cache& cache, AnswerMeter& meter,
                        std::size_t& size, PolicyHit& hit, DnstapWriter* tap) {
  hit = {};
  Match m = view.find(q.qname());
  PolicyHit::Kind kind = PolicyHit::Kind::qname;
  if (const Match c = client_rule(view, &client); c && (!m || c.zone <= m.zone)) {
    m = c;
    kind = PolicyHit::Kind::client_ip;
  }
  if (!m) return false;
  count(cache, meter, m, kind);
  const policy::PolicyAnswer a = policy::write_policy_answer(view, m, q, limit, out, cap);
  hit = hit_of(m, kind, a.decided);
  size = a.size;
  tap_mark(tap, hit, q, out, size);
  return a.decided;
}

std::size_t check_answer_policy(const policy::PolicyView& view, const dns::ClientQuery& q,
                                const sockaddr_storage* client, std::size_t limit, std::uint8_t* out, std::size_t size,
                                std::size_t cap, cache::Cache& cache, AnswerMeter& meter, PolicyHit& hit,
                                DnstapWriter* tap) {
  // A client PASSTHRU exempts its answers (asked only when rpz-client-ip triggers exist,
  // and the answer has names or addresses to check).
  if (const Match c = client_rule(view, client); c && c.action == Action::passthru) return size;
  const policy::ChainVerdict v = policy::check_answer_chain(view, q.qtype, q.qname_len, limit, out, size, cap);
  if (!v.match) return size;
  const bool address = v.match.record && (v.match.record[1] >> policy::kKindShift & policy::kKindMask) ==
                                             static_cast<unsigned>(TriggerKind::response_ip);
  const PolicyHit::Kind kind = address ? PolicyHit::Kind::response_ip : PolicyHit::Kind::cname_chain;
  count(cache, meter, v.match, kind);
  hit = hit_of(v.match, kind, v.decided);
  tap_mark(tap, hit, q, out, v.size);
  return v.size;
}

}  // namespace dnsarena::workers

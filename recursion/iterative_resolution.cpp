// SPDX-License-Identifier: GPL-3.0-or-later
#include "recursion/iterative_resolution.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <utility>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::recursion {

namespace {

// A referral's NS set is kept up to this many names, each with up to this many glue
// addresses: what one reply can make the resolver hold and ask.
constexpr std::size_t kMaxServersPerCut = 16;
constexpr std::size_t kMaxAddressesPerServer = 8;

bool is_name(std::span<const std::uint8_t> rdata) {
  return !rdata.empty() && wire::wire_name_length(rdata) == rdata.size();
}

bool is_strictly_below(std::span<const std::uint8_t> name, std::span<const std::uint8_t> zone) {
  return dnssec::is_subdomain(name, zone) && !std::equal(name.begin(), name.end(), zone.begin(), zone.end());
}

bool is_proof(const dnssec::Rrset& s) { return s.type == wire::kTypeNsec || s.type == wire::kTypeNsec3; }

std::vector<dnssec::Rrset> soa_sets(const dnssec::Response& reply) {
  std::vector<dnssec::Rrset> out;
  for (const dnssec::Rrset& s : reply.authority)
    if (s.type == wire::kTypeSoa) out.push_back(s);
  return out;
}

// A negative answer's authority section as a validator needs it: the SOA, and the NSEC /
// NSEC3 sets (each with its RRSIGs) that prove the name or type absent. Without DO the
// server sends no proofs: the SOA alone.
std::vector<dnssec::Rrset> denial_sets(const dnssec::Response& reply) {
  std::vector<dnssec::Rrset> out;
  for (const dnssec::Rrset& s : reply.authority)
    if (s.type == wire::kTypeSoa || is_proof(s)) out.push_back(s);
  return out;
}

// The NSEC / NSEC3 sets beside an answer (a wildcard expansion's proof that no closer
// name exists), appended to `out`.
void add_proofs(const dnssec::Response& reply, std::vector<dnssec::Rrset>& out) {
  for (const dnssec::Rrset& s : reply.authority)
    if (is_proof(s)) out.push_back(s);
}

void add_addresses(const dnssec::Rrset& a_set, std::vector<ServerAddress>& out) {
  for (const Bytes& rd : a_set.rdata) {
    if (rd.size() != 4 || out.size() >= kMaxAddressesPerServer) continue;
    ServerAddress a;
    std::copy(rd.begin(), rd.end(), a.v4.begin());
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
}

// The NS names of `ns_set` with their glue among `additional`, accepted when the owner
// lies within `bailiwick` (the zone of the server that sent it).
Delegation delegation_from(const dnssec::Rrset& ns_set, const std::vector<dnssec::Rrset>& additional,
                           std::span<const std::uint8_t> bailiwick) {
  Delegation d;
  d.zone = ns_set.owner;
  d.ttl = ns_set.ttl;
  for (const Bytes& rd : ns_set.rdata) {
    if (!is_name(rd) || d.servers.size() >= kMaxServersPerCut) continue;
    NameServer ns{rd, {}};
    for (const dnssec::Rrset& g : additional)
      if (g.type == wire::kTypeA && g.owner == rd && dnssec::is_subdomain(g.owner, bailiwick)) add_addresses(g, ns.addresses);
    d.servers.push_back(std::move(ns));
  }
  return d;
}

}  // namespace

IterativeResolution::IterativeResolution(Bytes qname, std::uint16_t qtype, Delegation hints, DelegationStore& store,
                                         Limits limits)
    : hints_(std::move(hints)), store_(store), limits_(limits) {
  stack_.push_back(make_task(dnssec::lowercase_name(qname), qtype));
  if (!store_.root_known()) {
    Task priming;
    priming.sname = Bytes(1, 0);
    priming.qtype = wire::kTypeNs;
    priming.priming = true;
    enter_cut(priming, hints_);
    stack_.push_back(std::move(priming));
  }
}

IterativeResolution::Task IterativeResolution::make_task(Bytes sname, std::uint16_t qtype) const {
  Task t;
  t.sname = std::move(sname);
  t.qtype = qtype;
  enter_cut(t, closest_cut(t));
  return t;
}

Delegation IterativeResolution::closest_cut(const Task& t) const {
  // A DS set lives at the parent side of its cut (RFC 4035 3.1.4.1): it is asked of the
  // parent's servers, never of the zone's own.
  const bool parent_side = t.qtype == wire::kTypeDs && dnssec::label_count(t.sname) > 0;
  const auto cut = store_.closest(parent_side ? dnssec::strip_labels(t.sname, 1) : t.sname);
  return cut ? *cut : hints_;
}

void IterativeResolution::enter_cut(Task& t, Delegation cut) const {
  t.cut = std::move(cut);
  t.failed.clear();
  t.no_reply.clear();
  t.retried.clear();
  t.looked_up.clear();
  t.minimised_queries = 0;
  t.minimised_labels = 0;
  if (limits_.qname_minimisation && !t.priming) {
    const unsigned next = dnssec::label_count(t.cut.zone) + 1;
    if (next < dnssec::label_count(t.sname)) t.minimised_labels = next;
  }
}

Bytes IterativeResolution::name_to_send(const Task& t) const {
  if (t.minimised_labels == 0) return t.sname;
  return dnssec::strip_labels(t.sname, dnssec::label_count(t.sname) - t.minimised_labels);
}

bool IterativeResolution::resolving_elsewhere(const Bytes& name) const {
  return std::any_of(stack_.begin(), stack_.end(),
                     [&](const Task& t) { return t.qtype == wire::kTypeA && t.sname == name; });
}

void IterativeResolution::finish(Task& t, std::uint16_t rcode, std::string why) {
  t.done = true;
  t.pending.reset();
  t.result.rcode = rcode;
  t.result.why = std::move(why);
  if (rcode == wire::kRcodeServFail) {  // no partial chain beside a failure
    t.result.answer.clear();
    t.result.authority.clear();
  }
}

void IterativeResolution::fail_all(const std::string& why) {
  stack_.resize(1);
  finish(stack_[0], wire::kRcodeServFail, why);
}

IterativeResolution::Step IterativeResolution::need(Query& out) {
  for (;;) {
    Task& t = stack_.back();
    if (t.done) {
      if (stack_.size() == 1) {
        result_ = t.result;
        return Step::done;
      }
      Task child = std::move(t);
      stack_.pop_back();
      Task& parent = stack_.back();
      if (child.priming) {
        if (store_.root_known()) enter_cut(parent, closest_cut(parent));
      } else if (child.for_server >= 0) {
        NameServer& ns = parent.cut.servers[static_cast<std::size_t>(child.for_server)];
        for (const dnssec::Rrset& s : child.result.answer)
          if (s.type == wire::kTypeA && s.owner == child.sname) add_addresses(s, ns.addresses);
        if (!ns.addresses.empty()) store_.learn(parent.cut);
      }
      continue;
    }
    if (t.pending) {
      out = *t.pending;
      return Step::query;
    }
    const ServerAddress* best = nullptr;
    std::uint32_t best_rank = 0;
    for (const NameServer& ns : t.cut.servers)
      for (const ServerAddress& a : ns.addresses) {
        if (t.failed.count(a)) continue;
        const std::uint32_t rank = servers_ ? servers_->rank(a, t.cut.zone) : 0;
        if (best == nullptr || rank < best_rank) {
          best = &a;
          best_rank = rank;
        }
      }
    if (best != nullptr) {
      if (queries_ >= limits_.max_queries) {
        fail_all("query budget of " + std::to_string(limits_.max_queries) + " spent");
        continue;
      }
      Query q;
      q.qname = name_to_send(t);
      q.qtype = t.minimised_labels != 0 ? wire::kTypeA : t.qtype;
      q.server = *best;
      q.zone = t.cut.zone;
      if (t.minimised_labels != 0) ++t.minimised_queries;
      t.pending = q;
      ++queries_;
      out = std::move(q);
      return Step::query;
    }
    // Every address failed: those that only timed out are asked once more, chosen as
    // above (a slow server is not a dead one); a second timeout fails them for good.
    if (!t.no_reply.empty()) {
      for (const ServerAddress& a : t.no_reply) {
        t.failed.erase(a);
        t.retried.insert(a);
      }
      t.no_reply.clear();
      continue;
    }
    // Every address failed: resolve a glueless NS name, within the bounds.
    if (!t.priming && t.looked_up.size() < limits_.max_ns_lookups && ns_lookups_ < limits_.max_ns_lookups_total &&
        stack_.size() - 1 < limits_.max_depth) {
      bool pushed = false;
      for (std::size_t i = 0; i < t.cut.servers.size() && !pushed; ++i) {
        const NameServer& ns = t.cut.servers[i];
        if (!ns.addresses.empty() || t.looked_up.count(ns.name) || dnssec::is_subdomain(ns.name, t.cut.zone) ||
            resolving_elsewhere(ns.name))
          continue;
        t.looked_up.insert(ns.name);
        ++ns_lookups_;
        Task sub = make_task(ns.name, wire::kTypeA);
        sub.for_server = static_cast<int>(i);
        stack_.push_back(std::move(sub));  // t is invalid from here
        pushed = true;
      }
      if (pushed) continue;
    }
    // A failed priming leaves the root cut unknown: the question is asked of the hints.
    finish(t, wire::kRcodeServFail,
           t.priming ? "priming failed" : "no server of " + dnssec::name_text(t.cut.zone) + " answered");
  }
}

void IterativeResolution::lame(Task& t, const ServerAddress& server) {
  t.failed.insert(server);
  if (servers_) servers_->lame(server, t.cut.zone);
}

void IterativeResolution::provide_failure(bool no_reply) {
  Task& t = stack_.back();
  if (!t.pending) return;
  t.failed.insert(t.pending->server);
  if (no_reply && !t.retried.count(t.pending->server)) t.no_reply.insert(t.pending->server);
  t.pending.reset();
}

void IterativeResolution::provide(const dnssec::Response& reply) {
  Task& t = stack_.back();
  if (!t.pending) return;
  const Query q = *t.pending;
  t.pending.reset();
  if (reply.qname != q.qname || reply.qtype != q.qtype) {
    t.failed.insert(q.server);
    return;
  }
  if (t.priming) {
    const dnssec::Rrset* ns = dnssec::find_rrset(reply.answer, t.sname, wire::kTypeNs);
    if (reply.rcode == wire::kRcodeNoError && ns != nullptr) {
      Delegation root = delegation_from(*ns, reply.additional, t.sname);
      if (std::any_of(root.servers.begin(), root.servers.end(), [](const NameServer& s) { return !s.addresses.empty(); })) {
        store_.learn(root);
        finish(t, wire::kRcodeNoError);
        return;
      }
    }
    t.failed.insert(q.server);
    return;
  }
  const bool minimised = q.qname != t.sname;
  if (reply.rcode == wire::kRcodeRefused) return lame(t, q.server);
  if (reply.rcode != wire::kRcodeNoError && reply.rcode != wire::kRcodeNxDomain) {
    if (minimised)
      t.minimised_labels = 0;  // relaxed: the full name next, from the same server
    else
      t.failed.insert(q.server);
    return;
  }
  if (minimised) {
    if (follow_referral(t, reply, q.qname)) return;
    if (reply.rcode == wire::kRcodeNxDomain) {
      t.minimised_labels = 0;  // relaxed: NXDOMAIN below a name is not believed
      return;
    }
    if (!reply.aa) return lame(t, q.server);  // neither a referral nor authoritative
    // An answer or NODATA: no cut at that name; one label more.
    ++t.minimised_labels;
    if (t.minimised_labels >= dnssec::label_count(t.sname) || t.minimised_queries >= kMaxMinimisedQueries)
      t.minimised_labels = 0;
    return;
  }
  if (follow_answer(t, reply)) return;
  if (reply.rcode == wire::kRcodeNxDomain) {
    if (reply.aa || !soa_sets(reply).empty()) {
      t.result.authority = denial_sets(reply);
      finish(t, wire::kRcodeNxDomain);
    } else {
      t.failed.insert(q.server);
    }
    return;
  }
  if (follow_referral(t, reply, q.qname)) return;
  if (reply.aa) {  // NODATA
    t.result.authority = denial_sets(reply);
    finish(t, wire::kRcodeNoError);
    return;
  }
  lame(t, q.server);  // neither a referral nor authoritative
}

bool IterativeResolution::follow_referral(Task& t, const dnssec::Response& reply, const Bytes& sent) {
  if (reply.aa || !reply.answer.empty() || reply.rcode != wire::kRcodeNoError) return false;
  const dnssec::Rrset* ns = nullptr;
  for (const dnssec::Rrset& s : reply.authority)
    if (s.type == wire::kTypeNs) ns = &s;
  if (ns == nullptr || !is_strictly_below(ns->owner, t.cut.zone) || !dnssec::is_subdomain(sent, ns->owner)) return false;
  if (++t.referrals > limits_.max_referrals) {
    finish(t, wire::kRcodeServFail, "more than " + std::to_string(limits_.max_referrals) + " referrals");
    return true;
  }
  Delegation d = delegation_from(*ns, reply.additional, t.cut.zone);
  if (d.servers.empty()) return false;
  store_.learn(d);
  enter_cut(t, std::move(d));
  return true;
}

bool IterativeResolution::follow_answer(Task& t, const dnssec::Response& reply) {
  if (reply.answer.empty()) return false;
  Bytes cur = t.sname;
  bool moved = false;
  // Only records within the zone of the server that sent them are believed: the chain
  // leaves the reply where it leaves that zone (an example.com server's A record for a
  // name under org. would poison the answer), and its target is asked of its own servers.
  for (; dnssec::is_subdomain(cur, t.cut.zone);) {
    bool found = false;
    for (const dnssec::Rrset& s : reply.answer)
      if (s.owner == cur && (s.type == t.qtype || t.qtype == wire::kTypeAny)) {
        t.result.answer.push_back(s);
        found = true;
      }
    if (found) {
      add_proofs(reply, t.result.authority);
      t.sname = cur;
      finish(t, wire::kRcodeNoError);
      return true;
    }
    const dnssec::Rrset* dname = nullptr;
    for (const dnssec::Rrset& s : reply.answer)
      if (s.type == wire::kTypeDname && is_strictly_below(cur, s.owner) && dnssec::is_subdomain(s.owner, t.cut.zone) &&
          s.rdata.size() == 1 && is_name(s.rdata[0]))
        dname = &s;
    const dnssec::Rrset* cname = dnssec::find_rrset(reply.answer, cur, wire::kTypeCname);
    if (cname != nullptr && (cname->rdata.size() != 1 || !is_name(cname->rdata[0]))) cname = nullptr;
    if (dname == nullptr && cname == nullptr) break;
    if (++t.links > limits_.max_chain) {
      finish(t, wire::kRcodeServFail, "chain of more than " + std::to_string(limits_.max_chain) + " CNAME/DNAME links");
      return true;
    }
    if (dname != nullptr) {
      t.result.answer.push_back(*dname);
      // The labels of cur above the DNAME's owner, then its target.
      Bytes next = cur.substr(0, cur.size() - dname->owner.size()) + dname->rdata[0];
      if (next.size() > wire::kMaxNameWire) {
        finish(t, 6 /* YXDOMAIN, RFC 6672 2.2 */);
        return true;
      }
      if (cname != nullptr) t.result.answer.push_back(*cname);  // the CNAME synthesized from it
      cur = std::move(next);
    } else {
      t.result.answer.push_back(*cname);
      cur = cname->rdata[0];
    }
    moved = true;
  }
  if (!moved) return false;
  t.sname = cur;
  add_proofs(reply, t.result.authority);
  // The server may have answered for the target too (a name of its own zone).
  if (reply.aa && dnssec::is_subdomain(cur, t.cut.zone)) {
    if (reply.rcode == wire::kRcodeNxDomain || !soa_sets(reply).empty()) {
      t.result.authority = denial_sets(reply);
      finish(t, reply.rcode);
      return true;
    }
  }
  t.referrals = 0;
  enter_cut(t, closest_cut(t));
  return true;
}

}  // namespace dnsarena::recursion

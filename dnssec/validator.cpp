// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/validator.hpp"

#include <algorithm>

#include "dnssec/denial.hpp"
#include "dnssec/dnskey_trust.hpp"

namespace dnsarena::dnssec {

Validation::Validation(const TrustAnchors& anchors, const Limits& limits, std::uint32_t now)
    : anchors_(anchors), budget_(limits), now_(now) {}

void Validation::trust_secure(const Bytes& zone, const std::vector<Bytes>& dnskeys) {
  zones_[zone] = ZoneTrust{Outcome::secure(), ZoneKeys(zone, dnskeys)};
}

void Validation::trust_insecure(const Bytes& zone, const Outcome& why) { zones_[zone] = ZoneTrust{why, {}}; }

void Validation::start(Response response) {
  response_ = std::move(response);
  targets_ = zones_to_establish(response_);
  advance();
}

bool Validation::fail(const Outcome& o) {
  finish(o);
  return false;
}

void Validation::finish(const Outcome& o) {
  finished_ = true;
  need_.reset();
  outcome_ = o;
  // A bound of the Budget cut the work short: that, not the step it left unproven, is why.
  const WorkCounters& c = budget_.counters();
  if (o.verdict == Verdict::bogus && c.signature_limit_hit)
    outcome_ = Outcome::bogus(Ede::dnssec_bogus, "signature validation limit reached");
  else if (o.verdict == Verdict::bogus && c.nsec3_hash_limit_hit)
    outcome_ = Outcome::bogus(Ede::dnssec_bogus, "NSEC3 hash limit reached");
}

void Validation::advance() {
  need_.reset();
  while (!targets_.empty()) {
    const Bytes target = targets_.back();
    Bytes known;
    const ZoneTrust* z = zone_for(zones_, target, &known);
    const TrustAnchors::Governing g = anchors_.governing(target);
    // A negative or positive anchor below the closest established zone takes over there.
    const auto deeper = [&](const Bytes& name) { return !z || label_count(name) > label_count(known); };
    if ((g.negative && deeper(*g.negative)) || (g.anchor && deeper(g.anchor->zone))) z = nullptr;
    if (!z) {
      if (g.negative) {
        zones_[*g.negative] = ZoneTrust{Outcome::insecure(Ede::none, "negative trust anchor"), {}};
        continue;
      }
      if (!g.anchor) {
        // Nothing can be proven about this name: recorded as indeterminate at the name.
        zones_[target] = ZoneTrust{{Verdict::indeterminate, Ede::none, "no trust anchor above the name"}, {}};
        continue;
      }
      pending_ds_ = g.anchor->ds;
      pending_ds_max_ttl_ = UINT32_MAX;
      pending_anchor_keys_ = g.anchor->dnskeys;
      need_ = Need{g.anchor->zone, kTypeDnskey};
      return;
    }
    if (z->outcome.verdict != Verdict::secure || known == target) {
      targets_.pop_back();
      continue;
    }
    // Down one label from the closest established zone, skipping names proven to be no cut.
    const unsigned have = label_count(known), want = label_count(target);
    Bytes child;
    for (unsigned l = have + 1; l <= want; ++l) {
      child = strip_labels(target, want - l);
      if (!no_cut_.count(child)) break;
      child.clear();
    }
    if (child.empty()) {  // every label below the zone is inside it: the target is in `known`
      targets_.pop_back();
      continue;
    }
    parent_ = known;
    need_ = Need{child, kTypeDs};
    return;
  }
  Outcome o = check_response(response_, zones_, now_, budget_);
  finish(o);
}

void Validation::provide(const Response* reply) {
  if (finished_ || !need_) return;
  if (++steps_ > kMaxSteps) return finish(Outcome::bogus(Ede::dnssec_bogus, "chain of trust too long"));
  const bool asked = need_->type == kTypeDnskey ? on_dnskey(reply) : on_ds(reply);
  if (!finished_ && !asked) advance();
}

bool Validation::on_dnskey(const Response* reply) {
  const Bytes zone = need_->name;
  const Rrset* set = reply ? find_rrset(reply->answer, zone, kTypeDnskey) : nullptr;
  if (!set) return fail(Outcome::bogus(Ede::dnskey_missing, "no DNSKEY set for the zone"));
  KeySetTrust t = trust_dnskey_set(*set, pending_ds_, pending_anchor_keys_, now_, budget_);
  if (t.outcome.verdict == Verdict::bogus) return fail(t.outcome);
  t.outcome.max_ttl = std::min(t.outcome.max_ttl, pending_ds_max_ttl_);  // the DS set that led here
  zones_[zone] = ZoneTrust{t.outcome, std::move(t.keys)};
  return false;
}

bool Validation::on_ds(const Response* reply) {
  const Bytes child = need_->name;
  const ZoneTrust& parent = zones_.at(parent_);
  if (!reply) return fail(Outcome::bogus(Ede::dnssec_bogus, "no answer to a DS question"));
  if (const Rrset* ds = find_rrset(reply->answer, child, kTypeDs)) {
    const Verified v = verify_rrset(*ds, parent.keys, now_, budget_);
    if (v.outcome.verdict != Verdict::secure) return fail(v.outcome);
    if (auto insecure = unusable_ds_set(ds->rdata)) {  // RFC 4035 5.2: no usable DS
      zones_[child] = ZoneTrust{*insecure, {}};
      return false;
    }
    pending_ds_ = ds->rdata;
    pending_ds_max_ttl_ = v.max_ttl;
    pending_anchor_keys_.clear();
    need_ = Need{child, kTypeDnskey};  // the child's DNSKEY set next, matched by this DS set
    return true;
  }
  // A CNAME at the name (signed by the parent) rules out a cut there: NS cannot be beside it.
  if (const Rrset* cname = find_rrset(reply->answer, child, kTypeCname)) {
    const Verified v = verify_rrset(*cname, parent.keys, now_, budget_);
    if (v.outcome.verdict != Verdict::secure) return fail(v.outcome);
    no_cut_.insert(child);
    return false;
  }
  // A denial from the parent: the validated NSEC / NSEC3 records of its zone.
  DenialSets d;
  bool any = false;
  for (const Rrset& s : reply->authority) {
    if (s.type != kTypeNsec && s.type != kTypeNsec3) continue;
    any = true;
    if (verify_rrset(s, parent.keys, now_, budget_).outcome.verdict == Verdict::secure)
      (s.type == kTypeNsec ? d.nsec : d.nsec3).push_back(&s);
  }
  if (reply->rcode == 3) {
    const Proof p = prove_nxdomain(d, parent_, child, budget_);
    if (p == Proof::proven) {
      // Nothing at or below `child`: everything there is in the parent's zone.
      Bytes t = targets_.back();
      while (t.size() >= child.size()) {
        no_cut_.insert(t);
        if (t == child) break;
        t = strip_labels(t, 1);
      }
      return false;
    }
    if (p == Proof::insecure) {
      zones_[child] = ZoneTrust{Outcome::insecure(Ede::none, "NXDOMAIN under NSEC3 opt-out"), {}};
      return false;
    }
    return fail(Outcome::bogus(any ? Ede::dnssec_bogus : Ede::nsec_missing, "DS question: NXDOMAIN not proven"));
  }
  switch (prove_no_ds(d, parent_, child, budget_)) {
    case CutProof::insecure_delegation:
      zones_[child] = ZoneTrust{Outcome::insecure(Ede::none, "insecure delegation"), {}};
      return false;
    case CutProof::no_cut:
      no_cut_.insert(child);
      return false;
    case CutProof::limit:
      return fail(Outcome::bogus(Ede::dnssec_bogus, "NSEC3 hash limit reached"));
    case CutProof::not_proven:
      break;
  }
  return fail(Outcome::bogus(any ? Ede::dnssec_bogus : Ede::nsec_missing, "no DS and no proof of its absence"));
}

}  // namespace dnsarena::dnssec

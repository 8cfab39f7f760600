// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/response_check.hpp"

#include <algorithm>
#include <set>

#include "dnssec/denial.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dnssec {

namespace {

std::optional<Bytes> signer_of(const Rrset& s) {
  for (const Bytes& rd : s.rrsigs)
    if (auto f = parse_rrsig(rd); f && is_subdomain(s.owner, f->signer)) return f->signer;
  return std::nullopt;
}

bool checked_in_authority(std::uint16_t t) { return t == kTypeSoa || t == kTypeNsec || t == kTypeNsec3 || t == kTypeDs; }

int rank(Verdict v) {
  switch (v) {
    case Verdict::bogus: return 3;
    case Verdict::indeterminate: return 2;
    case Verdict::insecure: return 1;
    case Verdict::secure: return 0;
  }
  return 3;
}

// The weakest of the two (the first one wins a tie: it keeps the first reason).
void weaken(Outcome& acc, const Outcome& o) {
  if (rank(o.verdict) > rank(acc.verdict)) acc = o;
}

// The target a CNAME synthesized from DNAME `dname` gives `owner`, or empty.
Bytes dname_target(const Rrset& dname, std::span<const std::uint8_t> owner) {
  if (dname.rdata.empty() || !is_subdomain(owner, dname.owner) || owner.size() <= dname.owner.size()) return {};
  Bytes out(owner.begin(), owner.end() - static_cast<std::ptrdiff_t>(dname.owner.size()));
  out += lowercase_name(dname.rdata[0]);
  return out.size() <= 255 ? out : Bytes{};
}

// An unsigned CNAME that a DNAME of the answer synthesizes (RFC 6672 5.3.1): it carries no
// RRSIG of its own, and its owner needs no zone of its own.
bool synthesized_from_dname(const Response& r, const Rrset& cname) {
  if (cname.type != kTypeCname || !cname.rrsigs.empty() || cname.rdata.empty()) return false;
  const Bytes target = lowercase_name(cname.rdata[0]);
  for (const Rrset& d : r.answer)
    if (d.type == kTypeDname && dname_target(d, cname.owner) == target) return true;
  return false;
}

struct SetVerdict {
  Outcome outcome;
  int wildcard_labels = -1;
  std::uint32_t max_ttl = UINT32_MAX;
  Bytes zone;
};

SetVerdict check_set(const Rrset& s, const ZoneTrustMap& zones, std::uint32_t now, Budget& budget) {
  SetVerdict v;
  const auto signer = signer_of(s);
  const ZoneTrust* z = nullptr;
  if (signer) {
    auto it = zones.find(*signer);
    // A signer the chain did not establish lies under an insecure cut or was never a zone.
    z = it != zones.end() ? &it->second : zone_for(zones, *signer);
    v.zone = *signer;
  } else {
    z = zone_for(zones, s.owner, &v.zone);
  }
  if (!z) {
    v.outcome = {Verdict::indeterminate, Ede::none, "no zone of the chain covers the RRset"};
    return v;
  }
  if (z->outcome.verdict != Verdict::secure) {
    v.outcome = z->outcome;
    return v;
  }
  if (signer && zones.find(*signer) == zones.end()) {
    v.outcome = Outcome::bogus(Ede::dnssec_bogus, "RRSIG signer is not a zone of the chain");
    return v;
  }
  if (signer) {
    // A zone the chain established between the signer and the owner owns the set: a
    // parent's key does not speak for data below a cut. At the cut itself the parent's
    // sets (DS, its NSEC) are owned by the child's apex name.
    Bytes closest;
    zone_for(zones, s.owner, &closest);
    if (closest != *signer && closest != s.owner) {
      v.outcome = Outcome::bogus(Ede::dnssec_bogus, "RRSIG signer above the zone that holds the name");
      return v;
    }
  }
  const Verified r = verify_rrset(s, z->keys, now, budget);
  v.outcome = r.outcome;
  v.wildcard_labels = r.wildcard_labels;
  v.max_ttl = r.max_ttl;
  return v;
}

// The verdict before the TTL bound is applied; `max_ttl` lowered by every verified set.
Outcome check_sets(const Response& r, const ZoneTrustMap& zones, std::uint32_t now, Budget& budget,
                   std::uint32_t& max_ttl);

}  // namespace

const ZoneTrust* zone_for(const ZoneTrustMap& zones, std::span<const std::uint8_t> name, Bytes* zone_name) {
  Bytes n(name.begin(), name.end());
  while (true) {
    if (auto it = zones.find(n); it != zones.end()) {
      if (zone_name) *zone_name = n;
      return &it->second;
    }
    if (n.size() <= 1) return nullptr;
    n = strip_labels(n, 1);
  }
}

std::vector<Bytes> zones_to_establish(const Response& r) {
  std::vector<Bytes> out;
  std::set<Bytes> seen;  // a hostile reply may carry thousands of sets: no quadratic scan
  auto add = [&](const Bytes& z) {
    if (seen.insert(z).second) out.push_back(z);
  };
  bool soa_signed = false;
  for (const Rrset& s : r.answer) {
    if (s.type == kTypeRrsig) continue;
    if (auto signer = signer_of(s)) add(*signer);
    else if (!synthesized_from_dname(r, s)) add(s.owner);
  }
  for (const Rrset& s : r.authority) {
    if (!checked_in_authority(s.type)) continue;
    if (auto signer = signer_of(s)) {
      add(*signer);
      soa_signed |= s.type == kTypeSoa;
    } else {
      add(s.type == kTypeNsec3 ? strip_labels(s.owner, 1) : s.owner);
    }
  }
  if (!soa_signed && (r.answer.empty() || r.rcode == 3)) add(r.qname);
  return out;
}

Outcome check_response(const Response& r, const ZoneTrustMap& zones, std::uint32_t now, Budget& budget) {
  std::uint32_t max_ttl = UINT32_MAX;
  Outcome acc = check_sets(r, zones, now, budget, max_ttl);
  if (acc.verdict == Verdict::secure) acc.max_ttl = max_ttl;
  return acc;
}

namespace {

Outcome check_sets(const Response& r, const ZoneTrustMap& zones, std::uint32_t now, Budget& budget,
                   std::uint32_t& max_ttl) {
  Outcome acc = Outcome::secure();
  if (r.rcode != 0 && r.rcode != 3) return {Verdict::indeterminate, Ede::none, "rcode neither NOERROR nor NXDOMAIN"};
  // Answer: follow the chain from the question name.
  Bytes name = r.qname;
  bool answered = false;
  std::vector<const Rrset*> used;
  for (int hop = 0; hop <= 16; ++hop) {
    const Rrset* data = r.qtype == 255 ? nullptr : find_rrset(r.answer, name, r.qtype);
    if (r.qtype == 255) {
      for (const Rrset& s : r.answer)
        if (s.owner == name && s.type != kTypeRrsig) data = &s;
    }
    if (data) {
      answered = true;
      for (const Rrset& s : r.answer)
        if (s.owner == name && (s.type == r.qtype || r.qtype == 255)) used.push_back(&s);
      break;
    }
    const Rrset* cname = find_rrset(r.answer, name, kTypeCname);
    if (!cname || cname->rdata.empty()) {
      // A DNAME above the name synthesizes the CNAME (RFC 6672): follow it.
      const Rrset* dname = nullptr;
      for (const Rrset& s : r.answer)
        if (s.type == kTypeDname && is_subdomain(name, s.owner) && name != s.owner) dname = &s;
      if (!dname) break;
      const Bytes target = dname_target(*dname, name);
      if (target.empty()) break;
      used.push_back(dname);
      if (cname && !cname->rrsigs.empty()) used.push_back(cname);
      name = target;
      continue;
    }
    const Bytes target = lowercase_name(cname->rdata[0]);
    if (cname->rrsigs.empty()) {
      // Unsigned CNAME: only valid as a DNAME synthesis; else it is checked (and fails).
      bool synthesized = false;
      for (const Rrset& s : r.answer)
        if (s.type == kTypeDname && dname_target(s, name) == target) {
          used.push_back(&s);
          synthesized = true;
        }
      if (!synthesized) used.push_back(cname);
    } else {
      used.push_back(cname);
    }
    name = target;
  }
  // Each set of the chain, verified; wildcard expansions remembered for the proofs below.
  struct Expansion {
    Bytes owner, zone;
    unsigned labels;
  };
  std::vector<Expansion> expansions;
  // Sets of the answer outside the chain are checked too: whatever the reply carries is
  // cached and served with it, so nothing unproven may ride along a secure answer.
  const std::set<const Rrset*> in_chain(used.begin(), used.end());
  for (const Rrset& s : r.answer)
    if (s.type != kTypeRrsig && !in_chain.count(&s) && !synthesized_from_dname(r, s)) used.push_back(&s);
  for (const Rrset* s : used) {
    const SetVerdict v = check_set(*s, zones, now, budget);
    weaken(acc, v.outcome);
    max_ttl = std::min(max_ttl, v.max_ttl);
    if (v.outcome.verdict == Verdict::secure && v.wildcard_labels >= 0)
      expansions.push_back({s->owner, v.zone, static_cast<unsigned>(v.wildcard_labels)});
  }
  if (acc.verdict == Verdict::bogus) return acc;
  // Authority: the signed sets, and the validated denial records per zone.
  std::map<Bytes, DenialSets> denial;
  bool any_denial_record = false;
  for (const Rrset& s : r.authority) {
    if (!checked_in_authority(s.type)) continue;
    const SetVerdict v = check_set(s, zones, now, budget);
    max_ttl = std::min(max_ttl, v.max_ttl);
    if (s.type == kTypeNsec || s.type == kTypeNsec3) {
      any_denial_record = true;
      if (v.outcome.verdict == Verdict::secure) {
        auto& d = denial[v.zone];
        (s.type == kTypeNsec ? d.nsec : d.nsec3).push_back(&s);
        continue;
      }
    }
    // Authority sets only matter to a negative answer or a wildcard proof; a bad one
    // there is bogus like any other (RFC 4035 5.3).
    if (!answered || !expansions.empty() || v.outcome.verdict != Verdict::secure) weaken(acc, v.outcome);
  }
  if (acc.verdict == Verdict::bogus) return acc;
  auto fail_denial = [&](Proof p, const char* what) {
    if (p == Proof::insecure) weaken(acc, Outcome::insecure(Ede::none, "denial under NSEC3 opt-out or iterations"));
    else if (p == Proof::limit) weaken(acc, Outcome::bogus(Ede::dnssec_bogus, "NSEC3 hash limit reached"));
    else if (!any_denial_record) weaken(acc, Outcome::bogus(Ede::nsec_missing, what));
    else weaken(acc, Outcome::bogus(Ede::dnssec_bogus, what));
  };
  for (const Expansion& e : expansions) {
    const Proof p = prove_wildcard_answer(denial[e.zone], e.zone, e.owner, e.labels, budget);
    if (p != Proof::proven) fail_denial(p, "wildcard answer without proof that the next closer name is absent");
  }
  if (answered) return acc;
  // Negative: the zone of the final name decides.
  Bytes zone;
  const ZoneTrust* z = zone_for(zones, name, &zone);
  if (!z) {
    weaken(acc, {Verdict::indeterminate, Ede::none, "no zone of the chain covers the name"});
    return acc;
  }
  if (z->outcome.verdict != Verdict::secure) {
    weaken(acc, z->outcome);
    return acc;
  }
  // The denial may come from a zone below the closest established one (a signed child
  // reached through the chain): take the deepest zone with denial records above the name.
  for (const auto& [dz, sets] : denial)
    if (is_subdomain(name, dz) && dz.size() > zone.size()) zone = dz;
  const DenialSets& d = denial[zone];
  const Proof p = r.rcode == 3 ? prove_nxdomain(d, zone, name, budget) : prove_nodata(d, zone, name, r.qtype, budget);
  if (p != Proof::proven) fail_denial(p, r.rcode == 3 ? "NXDOMAIN not proven" : "NODATA not proven");
  return acc;
}

}  // namespace

}  // namespace dnsarena::dnssec

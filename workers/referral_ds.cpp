// SPDX-License-Identifier: GPL-3.0-or-later
// A referral's DS set, or its signed proof that there is none, into the cache (referral_ds.hpp).
#include "workers/referral_ds.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

#include "cache/entry_codec.hpp"
#include "recursion/result_message.hpp"

namespace dnsarena::workers {

bool ReferralDs::keep(const dnssec::Response& reply, const dnssec::Bytes& zone) {
  if (reply.aa || !reply.answer.empty() || reply.rcode != 0) return false;  // a referral only
  const dnssec::Rrset* ns = nullptr;
  const dnssec::Rrset* ds = nullptr;
  std::vector<const dnssec::Rrset*> proofs;
  for (const dnssec::Rrset& s : reply.authority) {
    if (s.type == dnssec::kTypeNs) ns = &s;
    if (s.type == dnssec::kTypeDs) ds = &s;
  }
  if (!ns || ns->owner == zone || !dnssec::is_subdomain(ns->owner, zone)) return false;
  if (ds) return ds->owner == ns->owner && !ds->rrsigs.empty() && keep_ds(*ds);
  // The proof of no DS: the NSEC at the child's own name (the cut exists in the parent's
  // chain), or the NSEC3 records (the child's own, or the closest encloser's and the
  // Opt-Out cover of the next closer: which is which takes hashing, left to the validator).
  for (const dnssec::Rrset& s : reply.authority)
    if (!s.rrsigs.empty() && ((s.type == dnssec::kTypeNsec && s.owner == ns->owner) || s.type == dnssec::kTypeNsec3))
      proofs.push_back(&s);
  return !proofs.empty() && keep_no_ds(ns->owner, proofs);
}

bool ReferralDs::keep_ds(const dnssec::Rrset& ds) {
  recursion::Result result;
  result.rcode = 0;
  result.answer.push_back(ds);
  const dnssec::Bytes msg = recursion::result_message(ds.owner, dnssec::kTypeDs, result);
  const UpstreamQuestion asked{0, ds.owner, dnssec::kTypeDs, true, {}, {}, false};
  if (answer_.parse(msg.data(), msg.size(), asked, ttl_) != UpstreamAnswer::Verdict::accept || !answer_.cacheable())
    return false;
  return insert(ds.owner, answer_.answer());
}

bool ReferralDs::keep_no_ds(const dnssec::Bytes& child, const std::vector<const dnssec::Rrset*>& proofs) {
  // Built here, not through UpstreamAnswer: a denial without its zone's SOA is not an
  // answer that code caches (RFC 2308 5), and this one is only the proof.
  std::vector<cache::RecordData> records;
  std::uint32_t ttl = std::min(ttl_.ceiling, ttl_.negative_ceiling);
  for (const dnssec::Rrset* s : proofs) {
    ttl = std::min(ttl, s->ttl);
    // An owner left empty is the entry's name (cache/entry_codec.hpp).
    const std::span<const std::uint8_t> owner = s->owner == child ? std::span<const std::uint8_t>() : s->owner;
    for (const dnssec::Bytes& rdata : s->rdata) records.push_back({owner, s->type, s->klass, s->ttl, rdata});
    for (const dnssec::Bytes& sig : s->rrsigs) records.push_back({owner, dnssec::kTypeRrsig, s->klass, s->ttl, sig});
  }
  ttl = std::max(ttl, ttl_.floor);
  if (ttl == 0) return false;
  for (cache::RecordData& r : records) r.ttl = std::min(r.ttl, ttl);
  cache::Answer answer;
  answer.rcode = 0;
  answer.ttl = ttl;
  answer.sections[cache::kAuthority] = records;
  return insert(child, answer);
}

bool ReferralDs::insert(const dnssec::Bytes& child, const cache::Answer& answer) {
  try {
    const cache::CacheKey key(child, dnssec::kTypeDs, cache::kKeyDo | cache::kKeyCd);
    const std::uint32_t now = cache::wall_clock_now();
    if (cache::encode_entry(key, answer, now, entry_) == 0) return false;
    const cache::InsertStatus st = cache_.insert_encoded(key, entry_, now);
    return st == cache::InsertStatus::inserted || st == cache::InsertStatus::replaced;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace dnsarena::workers

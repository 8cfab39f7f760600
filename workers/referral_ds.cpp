// SPDX-License-Identifier: GPL-3.0-or-later
// A signed referral's DS set into the cache (referral_ds.hpp).
#include "workers/referral_ds.hpp"

#include <stdexcept>

#include "cache/entry_codec.hpp"
#include "recursion/result_message.hpp"

namespace dnsarena::workers {

bool ReferralDs::keep(const dnssec::Response& reply, const dnssec::Bytes& zone) {
  if (reply.aa || !reply.answer.empty() || reply.rcode != 0) return false;  // a referral only
  const dnssec::Rrset* ns = nullptr;
  const dnssec::Rrset* ds = nullptr;
  for (const dnssec::Rrset& s : reply.authority) {
    if (s.type == dnssec::kTypeNs) ns = &s;
    if (s.type == dnssec::kTypeDs) ds = &s;
  }
  if (!ns || !ds || ds->owner != ns->owner || ds->rrsigs.empty() || ds->owner == zone ||
      !dnssec::is_subdomain(ds->owner, zone))
    return false;
  recursion::Result result;
  result.rcode = 0;
  result.answer.push_back(*ds);
  const dnssec::Bytes msg = recursion::result_message(ds->owner, dnssec::kTypeDs, result);
  const UpstreamQuestion asked{0, ds->owner, dnssec::kTypeDs, true, {}, {}, false};
  if (answer_.parse(msg.data(), msg.size(), asked, ttl_) != UpstreamAnswer::Verdict::accept || !answer_.cacheable())
    return false;
  try {
    const cache::CacheKey key(ds->owner, dnssec::kTypeDs, cache::kKeyDo | cache::kKeyCd);
    const std::uint32_t now = cache::wall_clock_now();
    if (cache::encode_entry(key, answer_.answer(), now, entry_) == 0) return false;
    const cache::InsertStatus st = cache_.insert_encoded(key, entry_, now);
    return st == cache::InsertStatus::inserted || st == cache::InsertStatus::replaced;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace dnsarena::workers

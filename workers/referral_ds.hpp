// SPDX-License-Identifier: GPL-3.0-or-later
// The DS set a signed referral carries, kept for validation (validation_jobs.hpp).
//
// A parent's server asked with DO answers a referral to a signed child with the child's
// DS set and its RRSIGs in the authority section (RFC 4035 3.1.4). While validating, the
// recursive resolver (recursive_client.hpp) hands every reply here before its state
// machine reads it: a DS set owned by the referral's NS owner, strictly below the zone
// of the server asked (that server's bailiwick, as the state machine checks for the cut),
// with at least one RRSIG, is written as an answer to (child, DS) and cached under the
// key a validation job looks its sets up by, (child, DS, DO|CD): that job then finds it
// and sends no DS query of its own (as Unbound and Knot Resolver take the DS from the
// referral). The entry is unvalidated data as any fetched set is (a CD entry): each
// validation that reads it verifies it against the parent's keys, so a forged DS costs
// a bogus verdict, never a trusted key.
//
// A referral to an unsigned child carries instead the parent's signed proof that no DS
// exists (RFC 4035 3.1.4.1: the NSEC at the child with NS and without DS, or RFC 5155
// 7.2.7: the NSEC3 matching it, or the closest encloser's and the Opt-Out cover of the
// next closer). Those NSEC / NSEC3 sets and their RRSIGs are cached under the same key
// as a NOERROR answer with an empty answer section and the proof in authority, living
// min(their TTLs, ttl.negative_ceiling, ttl.ceiling): the job reads the proof from it as
// from a fetched NODATA (the validator needs the records and the parent's keys, not the
// SOA) and sends no DS query, as Unbound takes the proof from the referral. The same
// checks apply: verified by every validation against the parent's keys, so a forged
// proof is bogus, never insecure. The referral carries no SOA of the parent, so the entry
// has none: a CD client asking that DS gets the proof without an SOA until the entry
// expires (it cannot cache the NODATA; RFC 2308 5).
//
// Cost: per referral one pass over its authority section; per signed referral one
// message written, parsed and encoded, and one cache insert; per unsigned referral with
// a proof, one entry encoded and inserted.
#pragma once
#include <cstdint>
#include <vector>

#include "cache/cache.hpp"
#include "dnssec/rrset.hpp"
#include "workers/upstream_answer.hpp"

namespace dnsarena::workers {

class ReferralDs {
public:
  ReferralDs(cache::Cache& cache, const TtlPolicy& ttl) : cache_(cache), ttl_(ttl) {}
  // `reply` came from a server of `zone` (wire, lowercase). True when a DS set or a
  // proof of its absence was cached.
  bool keep(const dnssec::Response& reply, const dnssec::Bytes& zone);

private:
  bool keep_ds(const dnssec::Rrset& ds);
  bool keep_no_ds(const dnssec::Bytes& child, const std::vector<const dnssec::Rrset*>& proofs);
  bool insert(const dnssec::Bytes& child, const cache::Answer& answer);

  cache::Cache& cache_;
  const TtlPolicy& ttl_;
  UpstreamAnswer answer_;
  std::vector<std::uint8_t> entry_;
};

}  // namespace dnsarena::workers

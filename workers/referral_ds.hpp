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
// a bogus verdict, never a trusted key. A referral's proof that no DS exists is not kept
// (a NODATA entry needs the parent's SOA, which a referral does not carry): the job asks.
//
// Cost: per referral one pass over its authority section; per signed referral one
// message written, parsed and encoded, and one cache insert.
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
  // `reply` came from a server of `zone` (wire, lowercase). True when a DS set was cached.
  bool keep(const dnssec::Response& reply, const dnssec::Bytes& zone);

private:
  cache::Cache& cache_;
  const TtlPolicy& ttl_;
  UpstreamAnswer answer_;
  std::vector<std::uint8_t> entry_;
};

}  // namespace dnsarena::workers

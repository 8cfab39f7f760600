// SPDX-License-Identifier: GPL-3.0-or-later
// Aggressive use of the DNSSEC-validated cache (RFC 8198) with NSEC and NSEC3 ranges: a
// stage of the worker's query path (query_pipeline.hpp) between the cache and the upstream.
//
//   learn    a validation that ended secure (validation_jobs.hpp) with NSEC or NSEC3
//            records in its authority section and the SOA of their zone: each record goes
//            into the host's table (nsec_ranges.hpp) with its RRSIGs and the zone's SOA
//            and RRSIGs, until now + min(NSEC/NSEC3 TTL, SOA TTL, SOA MINIMUM, the
//            verdict's max_ttl, ttl_ceiling) (RFC 8198 5.4, RFC 9077). Every set a secure
//            verdict passes was verified (response_check.hpp), whatever proof it served
//            (NXDOMAIN, NODATA, wildcard answer); a set without its zone's SOA beside it
//            (a wildcard answer) is not recorded: a synthesized answer needs the SOA. An
//            NSEC3 record is kept only with hash algorithm 1, iterations within
//            dnssec.limits.max_nsec3_iterations (RFC 9276: more make the zone insecure,
//            so no secure verdict carries one anyway) and its owner a hash label directly
//            below the signer; its NSEC3PARAM values are the record's own (RFC 5155 8.2).
//   answer   a miss of a client without CD: the ancestors of the name, closest first,
//            are looked up as zones in the table; the first one with ranges decides (its
//            NSEC ranges if it has any, else its NSEC3 ranges). They are read as the
//            validator reads a response's sets, and its own proofs decide
//            (dnssec/denial.hpp):
//              NSEC   covering range, closest encloser, no wildcard, RFC 6840 4.1
//                     delegations and DNAME, NODATA without the type nor CNAME, the
//                     parent side of a cut proves only the absence of DS;
//              NSEC3  RFC 5155 8.4-8.7: NXDOMAIN needs the closest encloser's record, a
//                     range covering the next closer name and one covering the wildcard
//                     at the encloser; NODATA the name's record without the type (nor
//                     CNAME), or the encloser proof and the wildcard's record without it.
//                     Never from a proof that relied on a range with the Opt-Out flag,
//                     except NODATA from the name's own record: an Opt-Out range proves
//                     nothing about the names it covers, any of which may be an insecure
//                     delegation (RFC 5155 6, RFC 8198 4.2). Hashing is bounded by
//                     dnssec.limits.max_nsec3_hashes per answer (the closest encloser
//                     search hashes up to the name's labels below the zone, plus the next
//                     closer and the wildcard; NXDOMAIN is tried before NODATA, and both
//                     share the bound); the hashes count in DnssecCounter::nsec3_hashes,
//                     an answer that ran out in nsec3_hash_limit (then: upstream).
//              NXDOMAIN  the name is proven absent, and no wildcard could have made it;
//              NODATA    the name (or the wildcard that matches it) without the type.
//            The answer: rcode, the SOA, and for DO clients the records that prove it
//            (NSEC: the fewest of the zone's ranges that do; NSEC3: those the proof used)
//            with every RRSIG; AD for clients that set DO or AD; each TTL what is left of
//            its range's. An answer over the client's size limit, meta types (ANY) and
//            anything not proven go upstream as before. Counted:
//            DnssecCounter::aggressive_nsec_answers.
//
// A miss that no range answers while a denial of its zone is being validated waits for
// that validation's ranges (denial_claims.hpp): the pipeline's step after answer().
//
// Not done: synthesized wildcard answers (RFC 8198 5.3).
//
// Costs: learn is one table put per NSEC or NSEC3 record of a secure negative answer.
// answer is, per ancestor of the name, one hash and a scan of one bucket's slot headers;
// the zone that holds ranges has its records (at most NsecRanges::kWays) copied and
// parsed, and the proofs run over them (no signature checks: they were verified when
// learned; NSEC3: a few SHA-1 hashes, each 1 + iterations compressions). A flood of random
// names below a signed zone costs that per name instead of an upstream query.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dns/client_query.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"
#include "workers/dnssec_counters.hpp"
#include "workers/nsec_ranges.hpp"
#include "workers/query_check.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

class AggressiveNsec {
public:
  // `host`: the host's table (nullptr: a private one, this worker's proofs only). Off
  // unless the config validates with dnssec.aggressive_nsec.
  // REQUIRES: the caller is `counters`' only writer.
  AggressiveNsec(const ServeConfig& cfg, NsecRanges* host, DnssecCounters::Row& counters);
  ~AggressiveNsec();

  bool on() const { return on_; }
  // A validation's response and its verdict, at wall-clock second `now`.
  void learn(const dnssec::Response& r, const dnssec::Outcome& o, std::uint32_t now);
  // The synthesized answer to `q` (asked with `c`) written into out, or 0: none (go upstream).
  std::size_t answer(const dns::ClientQuery& q, const CheckedQuery& c, std::uint32_t now, std::uint8_t* out,
                     std::size_t cap);

private:
  const ServeConfig& cfg_;
  bool on_;
  std::unique_ptr<NsecRanges> own_;  // without a host table
  NsecRanges* table_;
  DnssecCounters::Row& counters_;
  std::vector<std::uint8_t> scratch_;  // NsecRanges::kCapacity: a record read from the table
};

// The hash a name is stored under (lowercase wire). Never 0.
std::uint64_t nsec_name_hash(std::span<const std::uint8_t> name);

}  // namespace dnsarena::workers

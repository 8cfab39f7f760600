// SPDX-License-Identifier: GPL-3.0-or-later
// Aggressive use of the DNSSEC-validated cache (RFC 8198), NSEC only: a stage of the
// worker's query path (query_pipeline.hpp) between the cache and the upstream.
//
//   learn    a validation that ended secure (validation_jobs.hpp) with NSEC records in
//            its authority section and the SOA of their zone: each NSEC record goes into
//            the host's table (nsec_ranges.hpp) with its RRSIGs and the zone's SOA and
//            RRSIGs, until now + min(NSEC TTL, SOA TTL, SOA MINIMUM, the verdict's
//            max_ttl, ttl_ceiling) (RFC 8198 5.4, RFC 9077). Every NSEC set a secure
//            verdict passes was verified (response_check.hpp), whatever proof it served
//            (NXDOMAIN, NODATA, wildcard answer); a set without its zone's SOA beside it
//            (a wildcard answer) is not recorded: a synthesized answer needs the SOA.
//   answer   a miss of a client without CD: the ancestors of the name, closest first,
//            are looked up as zones in the table; the first one with ranges decides. Its
//            ranges are read as the validator reads a response's NSEC sets, and its
//            own proofs decide (dnssec/denial.hpp: covering range, closest encloser, no
//            wildcard, RFC 6840 4.1 delegations and DNAME, NODATA without the type nor
//            CNAME, the parent side of a cut proves only the absence of DS):
//              NXDOMAIN  a range covers the name and one (the same or another) covers
//                        the wildcard at its closest encloser;
//              NODATA    a range at the name without the type, an empty non-terminal,
//                        or a wildcard without the type.
//            The answer: rcode, the SOA, and for DO clients the NSEC records that prove
//            it (the fewest of the zone's ranges that do) with every RRSIG; AD for
//            clients that set DO or AD; each TTL what is left of its range's. An answer
//            over the client's size limit, NSEC3 zones, meta types (ANY) and anything
//            not proven go upstream as before. Counted: DnssecCounter::aggressive_nsec_answers.
//
// Not done: NSEC3 ranges (RFC 8198 allows them where there is no opt-out), and
// synthesized wildcard answers (RFC 8198 5.3).
//
// Costs: learn is one table put per NSEC record of a secure negative answer. answer is,
// per ancestor of the name, one hash and a scan of one bucket's slot headers; the zone
// that holds ranges has its records (at most NsecRanges::kWays) copied and parsed, and
// one proof run over them (no crypto: they were verified when learned). A flood of random
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

// SPDX-License-Identifier: GPL-3.0-or-later
// Between the worker's forms of an answer and the validator's (dnssec/rrset.hpp):
//
//   to_dnssec_response   a parsed upstream answer (cache::Answer, as UpstreamAnswer scrubbed
//                        it: RRSIGs kept, upstream_answer.hpp) or a cached entry (a DS or
//                        DNSKEY set fetched earlier) read into a dnssec::Response: answer
//                        and authority grouped into RRsets in canonical form; additional
//                        is not validated (glue is never served as an answer)
//   strip_dnssec         the answer without RRSIG, NSEC and NSEC3 (unless asked for): what a
//                        client without DO gets, when the query upstream carried DO only
//                        so that the answer could be validated
//   with_verdict         an encoded entry with its verdict (the info byte's bits 6-7,
//                        cache/entry_format.hpp); secure: re-encoded with AD and every TTL
//                        capped at the validation's max_ttl (RFC 4035 5.3.3: no longer
//                        than the RRSIGs allow); else the same bytes, the verdict set
//                        (re-encoded, AD clear, when max_ttl is below the entry's TTL:
//                        an answer insecure by a run-time NTA, runtime_ntas.hpp)
//
// Cost: one copy of each record into canonical form (dnssec/rrset.hpp), and for
// with_verdict one decode and one encode of the entry: once per validated miss, never on
// a hit.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"

namespace dnsarena::workers {

dnssec::Response to_dnssec_response(const cache::Answer& answer, std::span<const std::uint8_t> qname,
                                    std::uint16_t qtype);
// False when the entry does not read back (malformed records).
bool to_dnssec_response(cache::EntryReader& entry, dnssec::Response& out);

// `answer` without the DNSSEC records a client without DO does not get; the kept
// records' views go to `storage` (spans into the same bytes as `answer`'s).
cache::Answer strip_dnssec(const cache::Answer& answer, std::uint16_t qtype,
                           std::vector<cache::RecordData> (&storage)[3]);

// The entry (encoded for `key`, padded) with `verdict` (not bogus: never cached) into
// `out` (padded); every TTL at most `max_ttl`; secure: AD set. Returns the unpadded
// length, 0 when the entry does not read back.
std::size_t with_verdict(std::span<const std::uint8_t> entry, const cache::CacheKey& key, dnssec::Verdict verdict,
                         std::uint32_t max_ttl, std::uint32_t now, std::vector<std::uint8_t>& out);

}  // namespace dnsarena::workers

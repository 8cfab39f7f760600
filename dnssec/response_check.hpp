// SPDX-License-Identifier: GPL-3.0-or-later
// The verdict on one response once the zones it touches are known (validator.hpp builds
// that knowledge): every RRset verified with its signer's keys, CNAME chains followed,
// wildcard expansions and negative answers proven (RFC 4035 5.3-5.4, RFC 5155 8).
//
// The response's sets, in turn:
//   answer     every set (CNAME chain, the final answer, DNAME and the CNAME synthesized
//              from it, which carries no RRSIG of its own: RFC 6672 5.3.1) by its signer,
//              and any other set the answer carries: it would be cached and served with it
//   authority  SOA, NSEC, NSEC3 and DS sets by their signers; NS sets are not signed at a
//              cut and are ignored
// A set in an insecure zone is insecure; in a secure zone a set without a usable RRSIG is
// bogus (10). After the chain (at most 16 CNAMEs): data of the asked type, or a proof
// that there is none: NXDOMAIN by prove_nxdomain, NOERROR without data by prove_nodata,
// from the validated NSEC / NSEC3 sets of the zone; none at all is NSEC Missing (12).
// A wildcard answer needs prove_wildcard_answer. The verdict is the weakest over all:
// bogus before insecure before secure.
#pragma once
#include <map>

#include "dnssec/limits.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

// What the chain of trust concluded for a zone: secure with its keys, or insecure.
struct ZoneTrust {
  Outcome outcome;
  ZoneKeys keys;  // when secure
};
using ZoneTrustMap = std::map<Bytes, ZoneTrust>;

// The zone in `zones` closest above `name` (at or below), or nullptr.
const ZoneTrust* zone_for(const ZoneTrustMap& zones, std::span<const std::uint8_t> name, Bytes* zone_name = nullptr);

// The signer names of the response's RRSIGs that lie at or above their owners, and the
// owners of sets that carry none (answer; SOA/NSEC/NSEC3/DS in authority); plus the
// question name for a negative answer without SOA signature. What the chain must reach.
std::vector<Bytes> zones_to_establish(const Response& r);

Outcome check_response(const Response& r, const ZoneTrustMap& zones, std::uint32_t now, Budget& budget);

}  // namespace dnsarena::dnssec

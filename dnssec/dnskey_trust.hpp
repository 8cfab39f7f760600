// SPDX-License-Identifier: GPL-3.0-or-later
// Trusting a zone's DNSKEY set (RFC 4035 section 5.2): from a validated DS set (or a trust
// anchor given as DS records) by digest, or from a trust anchor given as DNSKEY records by
// equality; then the matched key must have signed the DNSKEY set itself.
//
// DS -> DNSKEY: a DS is usable when its algorithm (8, 10, 13, 14, 15, 16) and digest
// type (1, 2, 4: SHA-1, SHA-256, SHA-384, computed by libdnssec) are supported; SHA-1 DS
// records are ignored when a SHA-256 or SHA-384 one is present (RFC 4509 section 3). A
// DS set with no usable record makes the zone insecure (EDE 1 when the algorithms are the
// reason, else 2). Each DS is tried against at most Limits::max_key_tag_collisions keys of
// its tag and algorithm (KeyTrap). No key matching a usable DS: bogus, DNSKEY Missing (9).
// A matching key that did not sign the set: bogus with verify_rrset's reason.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "dnssec/limits.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::dnssec {

struct KeySetTrust {
  Outcome outcome;  // secure: max_ttl bounds how long the trusted key set may be kept
  ZoneKeys keys;  // when secure: every key of the set (all may sign other sets)
};

// True when `dnskey` (RDATA) at `zone` has the digest `ds` (RDATA) names.
bool ds_matches_dnskey(std::span<const std::uint8_t> ds, std::span<const std::uint8_t> zone,
                       std::span<const std::uint8_t> dnskey);

// The verdict a validated DS set gives before any DNSKEY is fetched: insecure (EDE 1 or 2)
// when none of its records has a supported algorithm and digest type, else nullopt.
std::optional<Outcome> unusable_ds_set(const std::vector<Bytes>& ds_rdata);

// `dnskey_set`: the DNSKEY RRset of `zone` with its RRSIGs. `ds_rdata` validated DS
// records, `anchor_dnskeys` DNSKEY RDATA from a trust anchor (either may be empty).
KeySetTrust trust_dnskey_set(const Rrset& dnskey_set, const std::vector<Bytes>& ds_rdata,
                             const std::vector<Bytes>& anchor_dnskeys, std::uint32_t now, Budget& budget);

}  // namespace dnsarena::dnssec

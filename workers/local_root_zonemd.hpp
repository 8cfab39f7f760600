// SPDX-License-Identifier: GPL-3.0-or-later
// What a local root copy's ZONEMD (RFC 8976, dnssec/zone_digest.hpp) decides about its
// load (recursion.local_root_zonemd, recursion_config.hpp). RFC 8806 section 4 asks that
// a copy be verified before it is used; the root zone carries a SHA-384 ZONEMD.
//
//   mode     ZONEMD matches   absent / only unknown algorithms   does not match
//   verify   loads, verified  loads, logged as not verified      refused
//   require  loads, verified  refused                            refused
//   off      loads, not checked (no digest is computed)
//
// Refused: LocalRoot::load throws "PATH: ZONEMD ...: why" (the digest the record holds
// and the one computed, or what made the record unusable), so a start fails and a reload
// keeps the running copy. Unbound's counterparts: zonemd-check (verify) and
// zonemd-reject-absence (require).
//
// DNSSEC (RFC 8976 section 4 steps 1-2): with a trust anchor for the root
// (dnssec.trust_anchor_file) and a ZONEMD that matched, the ZONEMD RRset must also be
// signed by a key of the copy's own DNSKEY set, and that set must validate against the
// anchor (dnskey_trust.hpp: trust_dnskey_set, then zone_keys.hpp: verify_rrset, under the
// default dnssec::Limits). Else the copy is refused: a digest is only as good as whoever
// wrote it, and the signature says who. Without an anchor (or under a negative one) only
// the digest is checked. The absence of a ZONEMD is not proven from the copy's NSEC
// records: under verify a copy without one loads, as without an anchor.
#pragma once
#include <cstdint>
#include <string>

#include "dnssec/rrset.hpp"
#include "dnssec/trust_anchors.hpp"
#include "dnssec/zone_digest.hpp"

namespace dnsarena::workers {

enum class ZonemdCheck { verify, require, off };

// "verify", "require", "off"; anything else throws std::invalid_argument naming them.
ZonemdCheck parse_zonemd_check(const std::string& text);

// The verdict of a loaded copy, as LocalRoot keeps it for the log and the stats.
struct LocalRootDigest {
  ZonemdCheck check = ZonemdCheck::off;
  dnssec::ZonemdStatus status = dnssec::ZonemdStatus::absent;
  std::string detail;  // the verdict's detail (zone_digest.hpp)
  bool signature_validated = false;  // the ZONEMD RRset's RRSIG, up to the trust anchor
  // "verified (SHA-384 digest ...)", "not verified: no ZONEMD", "not checked" ...
  std::string summary() const;
};

// Verifies `zone` (every record of the copy added) against its SOA serial and applies
// `check` (not off). Throws std::runtime_error "PATH: ..." when the copy is refused.
LocalRootDigest check_local_root_digest(dnssec::ZoneDigest& zone, std::uint32_t soa_serial, ZonemdCheck check,
                                        const std::string& path);

// The DNSSEC part (see the header comment) of a copy whose digest verified: `zonemd` the
// apex ZONEMD set with its RRSIGs, `dnskey` the copy's DNSKEY set at the root (nullptr:
// none), at Unix time `now`. Sets d.signature_validated when the anchors govern the root;
// throws std::runtime_error "PATH: ..." when the signature or the key set does not validate.
void check_local_root_signature(LocalRootDigest& d, const dnssec::Rrset& zonemd, const dnssec::Rrset* dnskey,
                                const dnssec::TrustAnchors& anchors, std::uint32_t now, const std::string& path);

}  // namespace dnsarena::workers

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
#pragma once
#include <cstdint>
#include <string>

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
  // "verified (SHA-384 digest ...)", "not verified: no ZONEMD", "not checked" ...
  std::string summary() const;
};

// Verifies `zone` (every record of the copy added) against its SOA serial and applies
// `check` (not off). Throws std::runtime_error "PATH: ..." when the copy is refused.
LocalRootDigest check_local_root_digest(dnssec::ZoneDigest& zone, std::uint32_t soa_serial, ZonemdCheck check,
                                        const std::string& path);

}  // namespace dnsarena::workers

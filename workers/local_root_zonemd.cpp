// SPDX-License-Identifier: GPL-3.0-or-later
// The local root's ZONEMD check (local_root_zonemd.hpp).
#include "workers/local_root_zonemd.hpp"

#include <stdexcept>

#include "dnssec/dnskey_trust.hpp"
#include "dnssec/limits.hpp"
#include "dnssec/zone_keys.hpp"

namespace dnsarena::workers {

ZonemdCheck parse_zonemd_check(const std::string& text) {
  if (text == "verify") return ZonemdCheck::verify;
  if (text == "require") return ZonemdCheck::require;
  if (text == "off") return ZonemdCheck::off;
  throw std::invalid_argument("expected verify, require or off, got '" + text + "'");
}

std::string LocalRootDigest::summary() const {
  using dnssec::ZonemdStatus;
  if (check == ZonemdCheck::off) return "ZONEMD not checked (local_root_zonemd: off)";
  switch (status) {
    case ZonemdStatus::verified:
      return "ZONEMD verified (" + detail + (signature_validated ? ", its RRSIG validated from the trust anchor)" : ")");
    case ZonemdStatus::absent: return "ZONEMD not verified: the copy has none";
    case ZonemdStatus::unsupported: return "ZONEMD not verified: " + detail;
    case ZonemdStatus::failed: return "ZONEMD failed: " + detail;
  }
  return "?";
}

LocalRootDigest check_local_root_digest(dnssec::ZoneDigest& zone, std::uint32_t soa_serial, ZonemdCheck check,
                                        const std::string& path) {
  using dnssec::ZonemdStatus;
  const dnssec::ZonemdVerdict v = zone.verify(soa_serial);
  LocalRootDigest d{check, v.status, v.detail};
  if (v.status == ZonemdStatus::failed)
    throw std::runtime_error(path + ": ZONEMD does not verify (RFC 8976): " + v.detail);
  if (check == ZonemdCheck::require && v.status == ZonemdStatus::absent)
    throw std::runtime_error(path + ": no ZONEMD record at the root, and local_root_zonemd is require");
  if (check == ZonemdCheck::require && v.status == ZonemdStatus::unsupported)
    throw std::runtime_error(path + ": no ZONEMD record that can be checked, and local_root_zonemd is require: " +
                             v.detail);
  return d;
}

void check_local_root_signature(LocalRootDigest& d, const dnssec::Rrset& zonemd, const dnssec::Rrset* dnskey,
                                const dnssec::TrustAnchors& anchors, std::uint32_t now, const std::string& path) {
  const dnssec::TrustAnchors::Governing g = anchors.governing(zonemd.owner);
  if (g.anchor == nullptr || g.negative) return;  // nothing to validate from
  const std::string refused = path + ": the ZONEMD matches but does not validate (RFC 8976 section 4): ";
  if (zonemd.rrsigs.empty()) throw std::runtime_error(refused + "the ZONEMD set has no RRSIG");
  if (dnskey == nullptr) throw std::runtime_error(refused + "the copy has no DNSKEY set at the root");
  dnssec::Budget budget{dnssec::Limits{}};
  const dnssec::KeySetTrust keys = dnssec::trust_dnskey_set(*dnskey, g.anchor->ds, g.anchor->dnskeys, now, budget);
  if (keys.outcome.verdict != dnssec::Verdict::secure)
    throw std::runtime_error(refused + "the DNSKEY set does not validate from the trust anchor: " +
                             std::string(keys.outcome.why));
  const dnssec::Verified v = dnssec::verify_rrset(zonemd, keys.keys, now, budget);
  if (v.outcome.verdict != dnssec::Verdict::secure)
    throw std::runtime_error(refused + "the ZONEMD set's RRSIG: " + std::string(v.outcome.why));
  d.signature_validated = true;
}

}  // namespace dnsarena::workers

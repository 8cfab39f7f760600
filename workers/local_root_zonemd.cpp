// SPDX-License-Identifier: GPL-3.0-or-later
// The local root's ZONEMD check (local_root_zonemd.hpp).
#include "workers/local_root_zonemd.hpp"

#include <stdexcept>

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
    case ZonemdStatus::verified: return "ZONEMD verified (" + detail + ")";
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

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The proofs of denial.hpp: NSEC3 when the zone answered with NSEC3, NSEC otherwise.
#include "dnssec/denial.hpp"

#include "dnssec/nsec3_proof.hpp"
#include "dnssec/nsec_proof.hpp"

namespace dnsarena::dnssec {

Proof prove_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                     Budget& budget) {
  if (!d.nsec.empty()) return nsec_nxdomain(d, zone, qname);
  return nsec3_nxdomain(d, zone, qname, budget);
}

Proof prove_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                   std::uint16_t qtype, Budget& budget) {
  if (!d.nsec.empty()) return nsec_nodata(d, zone, qname, qtype);
  return nsec3_nodata(d, zone, qname, qtype, budget);
}

Proof prove_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> zone,
                            std::span<const std::uint8_t> qname, unsigned labels, Budget& budget) {
  if (!d.nsec.empty()) return nsec_wildcard_answer(d, qname, labels);
  return nsec3_wildcard_answer(d, zone, qname, labels, budget);
}

CutProof prove_no_ds(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> name,
                     Budget& budget) {
  if (!d.nsec.empty()) return nsec_no_ds(d, name);
  return nsec3_no_ds(d, zone, name, budget);
}

}  // namespace dnsarena::dnssec

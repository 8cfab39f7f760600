// SPDX-License-Identifier: GPL-3.0-or-later
// The NSEC3 half of denial.hpp (RFC 5155 8, RFC 9276), which dispatches to it when the
// zone answered with NSEC3. Same contracts as the prove_* functions there; every hash is
// taken from the budget.
#pragma once
#include "dnssec/denial.hpp"

namespace dnsarena::dnssec {

Proof nsec3_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                     Budget& budget);
Proof nsec3_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                   std::uint16_t qtype, Budget& budget);
Proof nsec3_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> zone,
                            std::span<const std::uint8_t> qname, unsigned labels, Budget& budget);
CutProof nsec3_no_ds(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> name,
                     Budget& budget);

}  // namespace dnsarena::dnssec

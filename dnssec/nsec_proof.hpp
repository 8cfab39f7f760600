// SPDX-License-Identifier: GPL-3.0-or-later
// The NSEC half of denial.hpp (RFC 4035 5.4, RFC 6840 4), which dispatches to it when the
// zone answered with NSEC. Same contracts as the prove_* functions there.
#pragma once
#include "dnssec/denial.hpp"

namespace dnsarena::dnssec {

Proof nsec_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname);
Proof nsec_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                  std::uint16_t qtype);
Proof nsec_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> qname, unsigned labels);
CutProof nsec_no_ds(const DenialSets& d, std::span<const std::uint8_t> name);

}  // namespace dnsarena::dnssec

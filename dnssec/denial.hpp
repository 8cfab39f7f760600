// SPDX-License-Identifier: GPL-3.0-or-later
// Authenticated denial of existence: what a set of (already validated) NSEC or NSEC3
// records proves about a name. The callers verify the records' signatures first
// (response_validation.cpp); these functions only read them.
//
// NSEC (RFC 4035 section 5.4, RFC 6840 section 4): a record covers a name when
// owner < name < next in canonical order (the last record wraps to the apex); the
// closest encloser of a denied name is the longer of its common ancestors with the
// covering record's owner and next name. A record at a delegation (NS without SOA) or with
// DNAME proves nothing about names below its owner (RFC 6840 4.1).
//
// NSEC3 (RFC 5155 section 8): names hashed with the records' parameters (SHA-1 through
// libdnssec), a closest encloser proof (a record matching the encloser, one covering the
// next closer name), opt-out (a covering record with the Opt-Out flag makes an NXDOMAIN
// or a DS denial insecure, RFC 5155 8.6, 9.2), and the bounds of limits.hpp: iterations
// above max_nsec3_iterations make the proof insecure (RFC 9276 3.2); each hash is taken
// from the Budget, and an exhausted budget fails the proof.
//
// Proofs:
//   nxdomain           the name does not exist, nor a wildcard that could have made it
//   nodata             the name exists without the type (and without CNAME); or a
//                      wildcard matching it exists without the type
//   wildcard_answer    the answer came from a wildcard (RRSIG labels < owner's labels):
//                      the next closer name does not exist (RFC 4035 5.3.4, RFC 5155 8.8)
//   no_ds              the name is a delegation without DS (an insecure cut), or no cut
#pragma once
#include <cstdint>
#include <vector>

#include "dnssec/limits.hpp"
#include "dnssec/rrset.hpp"

namespace dnsarena::dnssec {

enum class Proof : std::uint8_t {
  proven,
  not_proven,
  insecure,  // opt-out, or NSEC3 iterations above the bound
  limit,     // the NSEC3 hash budget ran out
};

// What a DS denial shows about `name`.
enum class CutProof : std::uint8_t {
  insecure_delegation,  // a cut at `name` without DS (or opt-out covering it)
  no_cut,               // `name` is inside the zone (no NS there)
  not_proven,
  limit,
};

struct DenialSets {
  std::vector<const Rrset*> nsec, nsec3;  // validated sets from the authority section
  // Not null: a proven NSEC3 nxdomain or nodata appends the sets it relied on (each once),
  // and sets *opt_out when one of them has the Opt-Out flag (aggressive_nsec.cpp answers
  // with those sets only, and never from an Opt-Out range). NSEC proofs leave them alone.
  std::vector<const Rrset*>* used = nullptr;
  bool* opt_out = nullptr;
};

Proof prove_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                     Budget& budget);
Proof prove_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                   std::uint16_t qtype, Budget& budget);
// `labels`: the RRSIG labels field of the expanded answer.
Proof prove_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> zone,
                            std::span<const std::uint8_t> qname, unsigned labels, Budget& budget);
CutProof prove_no_ds(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> name,
                     Budget& budget);

// NSEC3 hash of `name` (lowercase wire) as raw bytes; empty when the parameters are
// unusable. Takes one hash from the budget; exposed for tests and the benchmark.
Bytes nsec3_hash(std::span<const std::uint8_t> name, std::uint16_t iterations, std::span<const std::uint8_t> salt);

}  // namespace dnsarena::dnssec

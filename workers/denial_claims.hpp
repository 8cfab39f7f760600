// SPDX-License-Identifier: GPL-3.0-or-later
// Misses held back while a zone's denial is being validated, so that a random-subdomain
// flood's first moments go upstream once instead of once per name (RFC 8198 at cold start).
//
// With aggressive NSEC on, names under a signed zone are answered from the zone's
// validated NSEC / NSEC3 ranges (aggressive_nsec.hpp) once its first proofs are in the
// host's table. The first proof takes a chain of trust to validate (DS and DNSKEY
// fetches: an upstream round trip or more each), and every name of a flood that misses
// meanwhile would go upstream as well. So:
//
//   claim    a validation job (validation_jobs.hpp) whose answer is a denial (NXDOMAIN,
//            or NOERROR without answer records) with NSEC / NSEC3 records signed by zone
//            Z, and that has to wait for a set (it could not finish from the key cache at
//            once), claims "Z's denial" in the host's upstream claims table
//            (upstream_claims.hpp) until it ends, after its proofs were learned. A second
//            job for Z finds the claim held and takes none.
//   park     a miss of a client without CD, when no range answered it (aggressive_nsec
//            answer) and its name is at or below a zone so claimed, is parked on that
//            claim (parked_clients.hpp) instead of being asked upstream; when the claim
//            ends it is resolved again: from the new ranges when they prove it, else
//            upstream as before.
//
// The claim's question hash is the hash of Z's lowercase wire name mixed with a constant
// of this file, so that it stands for no client question (whose hash is of its dedup key).
// A hash that collides with another question's makes that question's clients wait for the
// job, at most as long as a claim lives: the cost of a wait, never a wrong answer.
//
// Costs: a miss (aggressive NSEC on, no CD) hashes each suffix of its name and loads one
// claim word per suffix; a job that waits claims once and releases once.
// Bounds: a parked client waits as a joined one does (ParkedClients::kMaxParked, its
// response and resolution timers); a claim counts as ended once older than `max_life_ms`
// (the longest a query lives), as a question's does.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "workers/upstream_claims.hpp"

namespace dnsarena::workers {

class DenialClaims {
public:
  // `claims`: the host's table (not null); `row`: this worker's row in it.
  DenialClaims(UpstreamClaims& claims, unsigned row, std::uint64_t max_life_ms)
      : claims_(claims), row_(row), max_life_ms_(max_life_ms) {}

  // Claims the denial of `zone` (lowercase wire). Value 0: not claimed (another job holds
  // it, or the slot is busy with another question).
  UpstreamClaims::Claim claim(std::span<const std::uint8_t> zone, std::uint64_t now_ms);
  void release(const UpstreamClaims::Claim& claim) { claims_.release(claim); }
  // The live claim of the closest zone at or above `name` (lowercase wire), if any.
  std::optional<UpstreamClaims::Claim> held_above(std::span<const std::uint8_t> name, std::uint64_t now_ms) const;

private:
  UpstreamClaims& claims_;
  unsigned row_;
  std::uint64_t max_life_ms_;
};

// The question hash of zone's denial (lowercase wire).
std::uint64_t denial_question(std::span<const std::uint8_t> zone);

}  // namespace dnsarena::workers

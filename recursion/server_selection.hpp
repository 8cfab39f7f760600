// SPDX-License-Identifier: GPL-3.0-or-later
// What the iterative resolution (iterative_resolution.hpp) asks of the caller's knowledge
// of authoritative servers, and what it tells it back: the state machine has no clock, no
// I/O and no shared memory, so RTTs, timeouts, backoff and remembered lameness live behind
// this interface (the serving resolver: workers/infra_ranking.hpp over the host's infra
// table; tests: their own).
//
//   rank  where an address stands for a query to `zone`, lower first: of a cut's
//         addresses not yet failed in this resolution, the lowest is asked next (ties in
//         the order the referral listed them)
//   lame  the address answered lamely for `zone` (REFUSED, or a non-authoritative reply
//         that is no referral): the caller may rank it last for that zone from now on
//
// Names are uncompressed lowercase wire names.
#pragma once
#include <cstdint>
#include <span>

#include "recursion/delegation.hpp"

namespace dnsarena::recursion {

class ServerSelection {
public:
  virtual ~ServerSelection() = default;
  virtual std::uint32_t rank(const ServerAddress& a, std::span<const std::uint8_t> zone) const = 0;
  virtual void lame(const ServerAddress& a, std::span<const std::uint8_t> zone) = 0;
};

}  // namespace dnsarena::recursion

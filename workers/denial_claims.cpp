// SPDX-License-Identifier: GPL-3.0-or-later
// Claims on a zone's denial being validated (denial_claims.hpp).
#include "workers/denial_claims.hpp"

#include <functional>
#include <string_view>

namespace dnsarena::workers {

namespace {

// Mixed into every denial's question hash (an arbitrary odd constant).
constexpr std::uint64_t kDenialSalt = 0x6a09e667f3bcc909ull;

}  // namespace

std::uint64_t denial_question(std::span<const std::uint8_t> zone) {
  const std::string_view bytes(reinterpret_cast<const char*>(zone.data()), zone.size());
  return std::hash<std::string_view>{}(bytes) ^ kDenialSalt;
}

UpstreamClaims::Claim DenialClaims::claim(std::span<const std::uint8_t> zone, std::uint64_t now_ms) {
  UpstreamClaims::Claim c;
  if (claims_.claim(denial_question(zone), row_, now_ms, max_life_ms_, &c) != UpstreamClaims::Outcome::claimed)
    return {};
  return c;
}

std::optional<UpstreamClaims::Claim> DenialClaims::held_above(std::span<const std::uint8_t> name,
                                                              std::uint64_t now_ms) const {
  // Each suffix of a wire name is an ancestor (or the name), closest first; the root last.
  std::size_t at = 0;
  while (at < name.size()) {
    UpstreamClaims::Claim c;
    if (claims_.peek(denial_question(name.subspan(at)), now_ms, max_life_ms_, &c)) return c;
    const std::uint8_t label = name[at];
    if (label == 0) break;
    at += std::size_t{label} + 1;
  }
  return std::nullopt;
}

}  // namespace dnsarena::workers

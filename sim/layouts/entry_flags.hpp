// SPDX-License-Identifier: GPL-3.0-or-later
// The packed flag byte of layouts v2..v5 (the published fleet's change 2: booleans in bit flags).
//
//   |7    |6       |5  |4|3 2 1 0|
//   |stale|negative|AD |0| rcode |
#pragma once
#include <cstdint>

namespace dnsarena::sim::layouts {

inline constexpr std::uint8_t kRcodeMask = 0x0F;
inline constexpr std::uint8_t kFlagAuthenticData = 1u << 5;
inline constexpr std::uint8_t kFlagNegative = 1u << 6;
inline constexpr std::uint8_t kFlagStale = 1u << 7;

inline std::uint8_t pack_entry_flags(std::uint8_t rcode, bool authentic_data, bool negative) {
  return static_cast<std::uint8_t>((rcode & kRcodeMask) | (authentic_data ? kFlagAuthenticData : 0) |
                                   (negative ? kFlagNegative : 0));
}

}  // namespace dnsarena::sim::layouts

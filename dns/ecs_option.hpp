// SPDX-License-Identifier: GPL-3.0-or-later
// EDNS Client Subnet (RFC 7871): the option as carried in a message, cutting it to a
// prefix, and writing its bytes.
//
//   option bytes   offset size  field
//                  0      2     option code (8)
//                  2      2     option length (4 + address bytes)
//                  4      2     family (1 IPv4, 2 IPv6)
//                  6      1     source prefix length
//                  7      1     scope prefix length
//                  8      a     address: ceil(source / 8) bytes, bits past source zero
//
// Purpose: one EcsOption for the worker (client queries, upstream queries, cache tags)
// and the simulator (synthetic upstream, load client). Parsing it out of a message is in
// knot_packet.hpp. The address is kept with the bits past the source prefix zero (libknot
// clears them when it parses; cut_to_prefix and write_ecs_option keep it so), so two
// options for one subnet are byte-equal.
//
// Costs: straight-line byte work, at most 24 bytes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace dnsarena::dns {

inline constexpr std::uint16_t kEcsFamilyIpv4 = 1, kEcsFamilyIpv6 = 2;
inline constexpr std::size_t kMaxEcsOptionBytes = 8 + 16;

struct EcsOption {
  bool present = false;
  std::uint16_t family = 0;  // kEcsFamilyIpv4 or kEcsFamilyIpv6
  std::uint8_t source_prefix = 0;
  std::uint8_t scope_prefix = 0;
  std::array<std::uint8_t, 16> address{};  // network order, bits past source_prefix zero
};

// Address bits of a family: 32 for IPv4, 128 otherwise.
inline unsigned ecs_family_bits(std::uint16_t family) { return family == kEcsFamilyIpv4 ? 32 : 128; }

// Shortens the source prefix to at most `prefix` bits, zeroes the address past it and the
// scope (what a resolver sends upstream, RFC 7871 7.1.2).
void cut_to_prefix(EcsOption& ecs, std::uint8_t prefix);

// Writes the option (layout above) for `ecs` with scope `scope`; the address bytes past
// the source prefix are not written and the bits past it are zero. Returns the bytes
// written (<= kMaxEcsOptionBytes).
std::size_t write_ecs_option(const EcsOption& ecs, std::uint8_t scope, std::uint8_t* out);

}  // namespace dnsarena::dns

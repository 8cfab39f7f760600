// SPDX-License-Identifier: GPL-3.0-or-later
#include "layout.hpp"

#include "wire/address_prefix.hpp"

namespace dnsarena::sim::layouts {

std::size_t ecs_tag_bytes(const cache::EcsTag& ecs, std::uint8_t (&out)[18]) {
  if (ecs.family == cache::EcsFamily::none) return 0;
  const unsigned max_bits = ecs.family == cache::EcsFamily::ipv4 ? 32 : 128;
  const unsigned prefix = ecs.prefix > max_bits ? max_bits : ecs.prefix;
  const std::size_t bytes = (prefix + 7) / 8;
  out[0] = static_cast<std::uint8_t>(ecs.family);
  out[1] = static_cast<std::uint8_t>(prefix);
  for (std::size_t i = 0; i < bytes; ++i) out[2 + i] = ecs.address[i];
  wire::clear_bits_past_prefix({out + 2, bytes}, prefix);
  return 2 + bytes;
}

}  // namespace dnsarena::sim::layouts

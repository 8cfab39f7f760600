// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/ecs_option.hpp"

#include <algorithm>
#include <cstring>

#include "wire/address_prefix.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

void cut_to_prefix(EcsOption& ecs, std::uint8_t prefix) {
  ecs.source_prefix = std::min(ecs.source_prefix, prefix);
  ecs.scope_prefix = 0;
  clear_bits_past_prefix(ecs.address, ecs.source_prefix);
}

std::size_t write_ecs_option(const EcsOption& ecs, std::uint8_t scope, std::uint8_t* out) {
  const std::size_t abytes = (ecs.source_prefix + 7u) / 8u;
  put16(out, kOptionEcs);
  put16(out + 2, static_cast<std::uint16_t>(4 + abytes));
  put16(out + 4, ecs.family);
  out[6] = ecs.source_prefix;
  out[7] = scope;
  std::memcpy(out + 8, ecs.address.data(), abytes);
  clear_bits_past_prefix({out + 8, abytes}, ecs.source_prefix);
  return 8 + abytes;
}

}  // namespace dnsarena::dns

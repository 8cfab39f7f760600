// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/knot_packet.hpp"

#include <algorithm>

namespace dnsarena::dns {

KnotParse parse_in_place(std::uint8_t* wire, std::size_t len, unsigned flags) {
  KnotParse out;
  if (len > KNOT_WIRE_MAX_PKTSIZE) return out;
  out.pkt.reset(knot_pkt_new(wire, static_cast<std::uint16_t>(len), nullptr));
  if (out.pkt) out.rc = knot_pkt_parse(out.pkt.get(), flags);
  return out;
}

EcsRead read_ecs_option(const knot_pkt_t* pkt, EcsOption& out) {
  const std::uint8_t* opt = knot_pkt_edns_option(pkt, KNOT_EDNS_OPTION_CLIENT_SUBNET);
  if (opt == nullptr) return EcsRead::absent;
  // libknot checks the family and both prefixes against the family's width, and clears
  // the address bits past the source prefix (knot 3.2: checked by tests/dns).
  knot_edns_client_subnet_t ecs{};
  if (knot_edns_client_subnet_parse(&ecs, knot_edns_opt_get_data(const_cast<std::uint8_t*>(opt)),
                                    knot_edns_opt_get_length(opt)) != KNOT_EOK ||
      (ecs.family != kEcsFamilyIpv4 && ecs.family != kEcsFamilyIpv6))
    return EcsRead::malformed;
  out.present = true;
  out.family = ecs.family;
  out.source_prefix = ecs.source_len;
  out.scope_prefix = ecs.scope_len;
  std::copy(std::begin(ecs.address), std::begin(ecs.address) + 16, out.address.begin());
  return EcsRead::ok;
}

bool read_cookie_option(const knot_pkt_t* pkt, Cookie& out) {
  const std::uint8_t* opt = knot_pkt_edns_option(pkt, KNOT_EDNS_OPTION_COOKIE);
  if (opt == nullptr) return true;
  const std::uint16_t len = knot_edns_opt_get_length(opt);
  if (!cookie_length_ok(len)) return false;
  std::memcpy(out.bytes.data(), knot_edns_opt_get_data(const_cast<std::uint8_t*>(opt)), len);
  out.len = static_cast<std::uint8_t>(len);
  return true;
}

}  // namespace dnsarena::dns

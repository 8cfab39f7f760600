// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/client_query.hpp"

#include <algorithm>

#include "cache/cache_key.hpp"
#include "dns/fast_query_parser.hpp"
#include "dns/knot_packet.hpp"
#include "dns/opt_record.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

ParseVerdict parse_query(std::uint8_t* wire, std::size_t len, ClientQuery& q, cache::CacheKey* key) {
  if (parse_query_fast(wire, len, q, key)) return ParseVerdict::ok;
  if (key) key->drop_name();  // the fast path may have taken the name before it declined
  return parse_query_knot(wire, len, q);
}

ParseVerdict parse_query_knot(std::uint8_t* wire, std::size_t len, ClientQuery& q) {
  if (len < 12 || len > 65535) return ParseVerdict::drop;
  q = ClientQuery{};
  q.id = get16(wire);
  q.flags = get16(wire + 2);
  if (q.flags & kFlagQr) return ParseVerdict::drop;  // a response: never answer those
  const unsigned opcode = (q.flags >> 11) & 0xF;
  const auto [pkt, rc] = parse_in_place(wire, len);
  if (!pkt) return ParseVerdict::drop;
  // The question alone, for the error response, when the full parse failed.
  auto take_question = [&](knot_pkt_t* p) {
    const knot_dname_t* qn = knot_pkt_wire_qname(p);
    if (p->qname_size == 0 || !qn) return;
    q.qname_len = static_cast<std::uint8_t>(std::min<std::size_t>(p->qname_size, 255));
    std::memcpy(q.qname_storage.data(), qn, q.qname_len);
    q.qtype = knot_pkt_qtype(p);
    q.qclass = knot_pkt_qclass(p);
  };
  if (opcode != 0) {
    if (rc == KNOT_EOK && knot_wire_get_qdcount(wire) == 1) take_question(pkt.get());
    return ParseVerdict::notimp;
  }
  if (rc != KNOT_EOK || knot_wire_get_qdcount(wire) != 1 || knot_wire_get_ancount(wire) != 0) {
    return ParseVerdict::formerr;
  }
  take_question(pkt.get());
  if (q.qname_len == 0) return ParseVerdict::formerr;
  if (knot_pkt_has_edns(pkt.get())) {
    q.edns = true;
    q.udp_size = std::max<std::uint16_t>(512, knot_edns_get_payload(pkt->opt_rr));
    q.do_bit = knot_edns_do(pkt->opt_rr);
    if (knot_edns_get_version(pkt->opt_rr) != 0) return ParseVerdict::badvers;
    const EcsRead ecs = read_ecs_option(pkt.get(), q.ecs);
    if (ecs == EcsRead::malformed || (ecs == EcsRead::ok && q.ecs.scope_prefix != 0))
      return ParseVerdict::formerr;  // RFC 7871 7.1.1
    if (!read_cookie_option(pkt.get(), q.cookie)) return ParseVerdict::formerr;  // RFC 7873 5.2.2
  }
  // IXFR, AXFR: no zone transfers here; type 0 is reserved (Knot answers NOTIMP too).
  if (q.qtype == kTypeIxfr || q.qtype == kTypeAxfr || q.qtype == 0) return ParseVerdict::notimp;
  if (q.qclass != kClassIn) return ParseVerdict::refused;
  return ParseVerdict::ok;
}

std::size_t write_error_response(const ClientQuery& q, std::uint16_t rcode, std::uint8_t* out, std::size_t capacity,
                                 std::optional<ExtendedError> ede) {
  const std::size_t cookie_bytes = q.edns && q.cookie.len ? 4u + q.cookie.len : 0;
  if (capacity < kMaxErrorResponseBytes + (ede ? kEdeOptionBytes : 0) + cookie_bytes)
    return 0;
  put16(out, q.id);
  const std::uint16_t flags = static_cast<std::uint16_t>(kFlagQr | (q.flags & (kOpcodeMask | kFlagRd | kFlagCd)) |
                                                         kFlagRa | (rcode & 0xF));
  put16(out + 2, flags);
  std::size_t pos = kHeaderBytes;
  const bool question = q.qname_len > 0;
  put16(out + 4, question ? 1 : 0);
  put16(out + 6, 0);
  put16(out + 8, 0);
  put16(out + 10, q.edns ? 1 : 0);
  if (question) {
    std::memcpy(out + pos, q.qname_storage.data(), q.qname_len);
    pos += q.qname_len;
    put16(out + pos, q.qtype);
    put16(out + pos + 2, q.qclass);
    pos += 4;
  }
  if (q.edns) {
    const std::size_t opt = pos;
    pos += write_opt_record(rcode, q.do_bit, q.ecs, 0, out + pos);
    // Appended to the OPT's options: its rdlength grows by each.
    std::size_t extra = ede ? write_ede_option(*ede, out + pos) : 0;
    extra += write_cookie_option(q.cookie, out + pos + extra);
    pos += extra;
    put16(out + opt + 9, static_cast<std::uint16_t>(get16(out + opt + 9) + extra));
  }
  return pos;
}

}  // namespace dnsarena::dns

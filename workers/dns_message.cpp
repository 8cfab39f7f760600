#include "workers/dns_message.hpp"

#include <algorithm>

#include "workers/knot_headers.hpp"

namespace dnsarena::workers {

namespace {

bool parse_ecs(const std::uint8_t* opt, EcsOption& out) {
  if (!opt) return false;
  knot_edns_client_subnet_t ecs{};
  if (knot_edns_client_subnet_parse(&ecs, knot_edns_opt_get_data(const_cast<std::uint8_t*>(opt)),
                                    knot_edns_opt_get_length(opt)) != KNOT_EOK)
    return false;
  if (ecs.family != 1 && ecs.family != 2) return false;
  out.present = true;
  out.family = ecs.family;
  out.source_prefix = ecs.source_len;
  out.scope_prefix = ecs.scope_len;
  std::copy(std::begin(ecs.address), std::begin(ecs.address) + 16, out.address.begin());
  return true;
}

}  // namespace

ParseVerdict parse_query(std::uint8_t* wire, std::size_t len, ClientQuery& q) {
  if (len < 12 || len > 65535) return ParseVerdict::drop;
  q = ClientQuery{};
  q.id = get16(wire);
  q.flags = get16(wire + 2);
  if (q.flags & 0x8000) return ParseVerdict::drop;  // a response: never answer those
  const unsigned opcode = (q.flags >> 11) & 0xF;
  KnotPkt pkt(knot_pkt_new(wire, static_cast<std::uint16_t>(len), nullptr));
  if (!pkt) return ParseVerdict::drop;
  const int rc = knot_pkt_parse(pkt.get(), 0);
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
    if (const std::uint8_t* opt = knot_pkt_edns_option(pkt.get(), KNOT_EDNS_OPTION_CLIENT_SUBNET)) {
      if (!parse_ecs(opt, q.ecs) || q.ecs.scope_prefix != 0) return ParseVerdict::formerr;  // RFC 7871 7.1.1
    }
  }
  // IXFR, AXFR: no zone transfers here; type 0 is reserved (Knot answers NOTIMP too).
  if (q.qtype == 251 || q.qtype == 252 || q.qtype == 0) return ParseVerdict::notimp;
  if (q.qclass != 1) return ParseVerdict::refused;
  return ParseVerdict::ok;
}

std::size_t write_ecs_option(const EcsOption& ecs, std::uint8_t scope, std::uint8_t* out) {
  const std::size_t abytes = (ecs.source_prefix + 7u) / 8u;
  put16(out, kOptEcs);
  put16(out + 2, static_cast<std::uint16_t>(4 + abytes));
  put16(out + 4, ecs.family);
  out[6] = ecs.source_prefix;
  out[7] = scope;
  std::memcpy(out + 8, ecs.address.data(), abytes);
  if (ecs.source_prefix % 8) out[8 + abytes - 1] &= static_cast<std::uint8_t>(0xFF00u >> (ecs.source_prefix % 8));
  return 8 + abytes;
}

std::size_t write_error_response(const ClientQuery& q, std::uint16_t rcode, std::uint8_t* out, std::size_t capacity) {
  if (capacity < 12 + 255 + 4 + 11 + 24) return 0;
  put16(out, q.id);
  const std::uint16_t flags =
      static_cast<std::uint16_t>(0x8000 | (q.flags & (0x7800 | 0x0100 | 0x0010)) | 0x0080 | (rcode & 0xF));
  put16(out + 2, flags);
  std::size_t pos = 12;
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
    out[pos] = 0;
    put16(out + pos + 1, 41);
    put16(out + pos + 3, 1232);
    out[pos + 5] = static_cast<std::uint8_t>(rcode >> 4);
    out[pos + 6] = 0;
    put16(out + pos + 7, q.do_bit ? 0x8000 : 0);
    std::size_t olen = 0;
    if (q.ecs.present) olen = write_ecs_option(q.ecs, 0, out + pos + 11);
    put16(out + pos + 9, static_cast<std::uint16_t>(olen));
    pos += 11 + olen;
  }
  return pos;
}

std::size_t write_upstream_query(std::uint16_t id, std::span<const std::uint8_t> qname, std::uint16_t qtype,
                                 bool do_bit, bool cd, const EcsOption& ecs, std::uint8_t* out,
                                 std::size_t capacity) {
  if (capacity < 12 + qname.size() + 4 + 11 + 24) return 0;
  put16(out, id);
  put16(out + 2, static_cast<std::uint16_t>(0x0100 | (cd ? 0x0010 : 0)));
  put16(out + 4, 1);
  put16(out + 6, 0);
  put16(out + 8, 0);
  put16(out + 10, 1);
  std::size_t pos = 12;
  std::memcpy(out + pos, qname.data(), qname.size());
  pos += qname.size();
  put16(out + pos, qtype);
  put16(out + pos + 2, 1);
  pos += 4;
  out[pos] = 0;
  put16(out + pos + 1, 41);
  put16(out + pos + 3, 1232);
  out[pos + 5] = 0;
  out[pos + 6] = 0;
  put16(out + pos + 7, do_bit ? 0x8000 : 0);
  std::size_t olen = ecs.present ? write_ecs_option(ecs, 0, out + pos + 11) : 0;
  put16(out + pos + 9, static_cast<std::uint16_t>(olen));
  return pos + 11 + olen;
}

}  // namespace dnsarena::workers

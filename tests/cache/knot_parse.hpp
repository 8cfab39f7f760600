// SPDX-License-Identifier: GPL-3.0-or-later
// Parses a DNS message with libknot (an independent parser, through dns/knot_packet.hpp)
// into plain structs, so the response writer's output is judged by someone else's code.
// Names are kept as written (KNOT_PF_NOCANON), not lowercased.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dns/knot_packet.hpp"
#include "test_answers.hpp"
#include "wire/constants.hpp"

namespace dnsarena::test {

struct ParsedRecord {
  Bytes owner;  // uncompressed wire form, as libknot decompressed it
  std::uint16_t type = 0, rclass = 0;
  std::uint32_t ttl = 0;
  Bytes rdata;
};

struct ParsedMessage {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;  // the header's flags word
  std::uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  Bytes qname_as_written;  // the question's name bytes exactly as on the wire
  std::uint16_t qtype = 0, qclass = 0;
  std::vector<ParsedRecord> sections[3];  // OPT excluded from the additional section
  bool has_opt = false;
  std::uint16_t opt_payload = 0;
  bool opt_do = false;
  Bytes opt_rdata;
};

// Returns nullopt (and says why through INFO) when libknot refuses the message.
inline std::optional<ParsedMessage> parse_with_knot(const std::uint8_t* wire_bytes, std::size_t len) {
  std::vector<std::uint8_t> copy(wire_bytes, wire_bytes + len);  // libknot parses in place
  const auto [owned, rc] = dns::parse_in_place(copy.data(), copy.size(), KNOT_PF_NOCANON);
  if (!owned) return std::nullopt;
  if (rc != KNOT_EOK) {
    UNSCOPED_INFO("knot_pkt_parse: " << knot_strerror(rc));
    return std::nullopt;
  }
  const knot_pkt_t* pkt = owned.get();
  ParsedMessage m;
  m.id = knot_wire_get_id(pkt->wire);
  m.flags = static_cast<std::uint16_t>((knot_wire_get_flags1(pkt->wire) << 8) | knot_wire_get_flags2(pkt->wire));
  m.qdcount = knot_wire_get_qdcount(pkt->wire);
  m.ancount = knot_wire_get_ancount(pkt->wire);
  m.nscount = knot_wire_get_nscount(pkt->wire);
  m.arcount = knot_wire_get_arcount(pkt->wire);
  if (m.qdcount == 1) {
    const knot_dname_t* qn = knot_pkt_wire_qname(pkt);
    m.qname_as_written.assign(qn, qn + pkt->qname_size);
    m.qtype = knot_pkt_qtype(pkt);
    m.qclass = knot_pkt_qclass(pkt);
  }
  const knot_section_t ids[3] = {KNOT_ANSWER, KNOT_AUTHORITY, KNOT_ADDITIONAL};
  for (int s = 0; s < 3; ++s) {
    const knot_pktsection_t* sec = knot_pkt_section(pkt, ids[s]);
    for (std::uint16_t i = 0; i < sec->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(sec, i);
      if (rr->type == wire::kTypeOpt) continue;
      ParsedRecord r;
      r.owner.assign(rr->owner, rr->owner + knot_dname_size(rr->owner));
      r.type = rr->type;
      r.rclass = rr->rclass;
      r.ttl = rr->ttl;
      if (rr->rrs.count == 1) r.rdata.assign(rr->rrs.rdata->data, rr->rrs.rdata->data + rr->rrs.rdata->len);
      m.sections[s].push_back(r);
    }
  }
  if (pkt->opt_rr) {
    m.has_opt = true;
    m.opt_payload = knot_edns_get_payload(pkt->opt_rr);
    m.opt_do = knot_edns_do(pkt->opt_rr);
    const knot_rdata_t* rd = pkt->opt_rr->rrs.rdata;
    if (pkt->opt_rr->rrs.count == 1) m.opt_rdata.assign(rd->data, rd->data + rd->len);
  }
  return m;
}

}  // namespace dnsarena::test

// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/message.hpp"

#include <cctype>
#include <cstring>

#include "dns/knot_packet.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

namespace {

void copy_records(const knot_pkt_t* pkt, knot_section_t section, std::vector<Record>& out) {
  out.clear();
  const knot_pktsection_t* sec = knot_pkt_section(pkt, section);
  for (std::uint16_t i = 0; i < sec->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(sec, i);
    char owner[KNOT_DNAME_TXT_MAXLEN + 1];
    if (knot_dname_to_str(owner, rr->owner, sizeof owner) == nullptr) owner[0] = 0;
    for (std::uint16_t r = 0; r < rr->rrs.count; ++r) {
      const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, r);
      Record rec;
      rec.owner = owner;
      rec.type = rr->type;
      rec.ttl = rr->ttl;
      rec.rdata.assign(rd->data, rd->data + rd->len);
      out.push_back(std::move(rec));
    }
  }
}

}  // namespace

ParseStatus parse_message(std::span<const std::uint8_t> wire, Message& out, bool want_records) {
  out = Message{};
  if (wire.size() < KNOT_WIRE_HEADER_SIZE) return ParseStatus::drop;
  out.id = knot_wire_get_id(wire.data());
  out.qr = knot_wire_get_qr(wire.data()) != 0;
  out.aa = knot_wire_get_aa(wire.data()) != 0;
  out.tc = knot_wire_get_tc(wire.data()) != 0;
  out.rd = knot_wire_get_rd(wire.data()) != 0;
  out.opcode = knot_wire_get_opcode(wire.data());
  out.rcode = knot_wire_get_rcode(wire.data());
  if (wire.size() > KNOT_WIRE_MAX_PKTSIZE) return ParseStatus::formerr;
  // libknot parses in place and may write: a copy of the caller's const bytes.
  std::uint8_t buf[KNOT_WIRE_MAX_PKTSIZE];
  std::memcpy(buf, wire.data(), wire.size());
  const auto [pkt, rc] = parse_in_place(buf, wire.size());
  if (!pkt) return ParseStatus::drop;
  if ((rc != KNOT_EOK && rc != KNOT_ETRAIL) || knot_wire_get_qdcount(buf) != 1) return ParseStatus::formerr;
  // knot_pkt_qname() is lowercased; the question as sent starts after the header.
  const std::size_t qlen = knot_dname_size(knot_pkt_qname(pkt.get()));
  out.qname.assign(buf + KNOT_WIRE_HEADER_SIZE, buf + KNOT_WIRE_HEADER_SIZE + qlen);
  out.qtype = knot_pkt_qtype(pkt.get());
  out.qclass = knot_pkt_qclass(pkt.get());
  ParseStatus status = ParseStatus::ok;
  if (pkt->opt_rr != nullptr) {
    out.edns = true;
    out.udp_payload = knot_edns_get_payload(pkt->opt_rr);
    out.edns_version = knot_edns_get_version(pkt->opt_rr);
    out.do_bit = knot_edns_do(pkt->opt_rr);
    out.rcode = knot_pkt_ext_rcode(pkt.get());
    if (read_ecs_option(pkt.get(), out.ecs) == EcsRead::malformed) status = ParseStatus::formerr;
  }
  if (want_records) {
    copy_records(pkt.get(), KNOT_ANSWER, out.answer);
    copy_records(pkt.get(), KNOT_AUTHORITY, out.authority);
  }
  return status;
}

std::string type_name(std::uint16_t type) {
  switch (type) {
    case kTypeA: return "A";
    case kTypeNs: return "NS";
    case kTypeCname: return "CNAME";
    case kTypeSoa: return "SOA";
    case kTypeTxt: return "TXT";
    case kTypeAaaa: return "AAAA";
    case kTypeAny: return "ANY";
    default: return "TYPE" + std::to_string(type);
  }
}

std::uint16_t type_from_name(std::string_view name) {
  for (std::uint16_t t : {kTypeA, kTypeNs, kTypeCname, kTypeSoa, kTypeTxt, kTypeAaaa, kTypeAny})
    if (type_name(t).size() == name.size()) {
      const std::string n = type_name(t);
      bool eq = true;
      for (std::size_t i = 0; i < n.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(name[i])) != n[i]) eq = false;
      if (eq) return t;
    }
  return 0;
}

}  // namespace dnsarena::dns

#include "sim/traffic/dns_message.hpp"

#include <cctype>
#include <cstring>

extern "C" {
#include <libknot/libknot.h>
}

namespace dnsarena::sim::traffic {

namespace {

void put16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}

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
  // knot_pkt_new does not copy and wants a mutable buffer.
  std::uint8_t buf[KNOT_WIRE_MAX_PKTSIZE];
  std::memcpy(buf, wire.data(), wire.size());
  knot_pkt_t* pkt = knot_pkt_new(buf, static_cast<std::uint16_t>(wire.size()), nullptr);
  if (pkt == nullptr) return ParseStatus::drop;
  ParseStatus status = ParseStatus::ok;
  const int rc = knot_pkt_parse(pkt, 0);
  if ((rc != KNOT_EOK && rc != KNOT_ETRAIL) || knot_wire_get_qdcount(buf) != 1) {
    status = ParseStatus::formerr;
  } else {
    // knot_pkt_qname() is lowercased; the question as sent starts after the header.
    const std::size_t qlen = knot_dname_size(knot_pkt_qname(pkt));
    out.qname.assign(buf + KNOT_WIRE_HEADER_SIZE, buf + KNOT_WIRE_HEADER_SIZE + qlen);
    out.qtype = knot_pkt_qtype(pkt);
    out.qclass = knot_pkt_qclass(pkt);
    if (pkt->opt_rr != nullptr) {
      out.edns = true;
      out.udp_payload = knot_edns_get_payload(pkt->opt_rr);
      out.edns_version = knot_edns_get_version(pkt->opt_rr);
      out.do_bit = knot_edns_do(pkt->opt_rr);
      out.rcode = knot_pkt_ext_rcode(pkt);
      std::uint8_t* opt = knot_edns_get_option(pkt->opt_rr, KNOT_EDNS_OPTION_CLIENT_SUBNET, nullptr);
      if (opt != nullptr) {
        knot_edns_client_subnet_t ecs{};
        if (knot_edns_client_subnet_parse(&ecs, knot_edns_opt_get_data(opt), knot_edns_opt_get_length(opt)) !=
                KNOT_EOK ||
            (ecs.family != 1 && ecs.family != 2) || ecs.source_len > (ecs.family == 1 ? 32 : 128)) {
          status = ParseStatus::formerr;
        } else {
          out.ecs.present = true;
          out.ecs.family = ecs.family;
          out.ecs.source = ecs.source_len;
          out.ecs.scope = ecs.scope_len;
          const unsigned bytes = (ecs.source_len + 7u) / 8u;
          std::memcpy(out.ecs.address.data(), ecs.address, bytes);
          if (ecs.source_len % 8 != 0)
            out.ecs.address[bytes - 1] &= static_cast<std::uint8_t>(0xFF00u >> (ecs.source_len % 8));
        }
      }
    }
    if (want_records) {
      copy_records(pkt, KNOT_ANSWER, out.answer);
      copy_records(pkt, KNOT_AUTHORITY, out.authority);
    }
  }
  knot_pkt_free(pkt);
  return status;
}

Bytes build_query(std::uint16_t id, std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, bool edns,
                  const EcsOption& ecs) {
  Bytes q;
  q.reserve(64 + qname_wire.size());
  put16(q, id);
  put16(q, 0x0100);  // RD
  put16(q, 1);
  put16(q, 0);
  put16(q, 0);
  put16(q, edns || ecs.present ? 1 : 0);
  q.append(qname_wire.data(), qname_wire.size());
  put16(q, qtype);
  put16(q, 1);  // IN
  if (edns || ecs.present) {
    q.push_back(0);  // root owner
    put16(q, kTypeOPT);
    put16(q, 1232);  // payload
    put16(q, 0);     // ext rcode, version
    put16(q, 0);     // flags
    if (!ecs.present) {
      put16(q, 0);
    } else {
      const unsigned abytes = (ecs.source + 7u) / 8u;
      put16(q, static_cast<std::uint16_t>(4 + 4 + abytes));
      put16(q, kOptionEcs);
      put16(q, static_cast<std::uint16_t>(4 + abytes));
      put16(q, ecs.family);
      q.push_back(ecs.source);
      q.push_back(ecs.scope);
      q.append(ecs.address.data(), abytes);
    }
  }
  return q;
}

std::string type_name(std::uint16_t type) {
  switch (type) {
    case kTypeA: return "A";
    case kTypeNS: return "NS";
    case kTypeCNAME: return "CNAME";
    case kTypeSOA: return "SOA";
    case kTypeTXT: return "TXT";
    case kTypeAAAA: return "AAAA";
    case kTypeANY: return "ANY";
    default: return "TYPE" + std::to_string(type);
  }
}

std::uint16_t type_from_name(std::string_view name) {
  for (std::uint16_t t : {kTypeA, kTypeNS, kTypeCNAME, kTypeSOA, kTypeTXT, kTypeAAAA, kTypeANY})
    if (type_name(t).size() == name.size()) {
      const std::string n = type_name(t);
      bool eq = true;
      for (std::size_t i = 0; i < n.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(name[i])) != n[i]) eq = false;
      if (eq) return t;
    }
  return 0;
}

}  // namespace dnsarena::sim::traffic

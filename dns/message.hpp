// SPDX-License-Identifier: GPL-3.0-or-later
// A whole DNS message read into plain values, for the simulator (synthetic upstream, load
// client) and tests: header fields, the question as received, EDNS payload / version / DO
// / ECS, and on request the answer and authority records.
//
// Parsing copies what the callers need so no libknot type leaks into sim/traffic. Cost:
// one copy of the message into a stack buffer (libknot parses in place and the caller's
// bytes are const), one knot_pkt allocation, and with records one string and one rdata
// copy per record. The upstream and load client run at tens of thousands of messages per
// second, far from where that matters; the resolver's hot path uses client_query.hpp.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "dns/ecs_option.hpp"

namespace dnsarena::dns {

struct Record {
  std::string owner;  // text, lowercase as sent
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  common::Bytes rdata;  // wire form, names inside decompressed
};

struct Message {
  std::uint16_t id = 0;
  bool qr = false, aa = false, tc = false, rd = false;
  std::uint8_t opcode = 0;
  std::uint16_t rcode = 0;     // header rcode, extended by EDNS when present
  common::Bytes qname;          // wire form, case as received
  std::uint16_t qtype = 0, qclass = 0;
  bool edns = false;
  std::uint16_t udp_payload = 0;
  std::uint8_t edns_version = 0;
  bool do_bit = false;
  EcsOption ecs;
  std::vector<Record> answer, authority;  // filled only when asked for
};

enum class ParseStatus {
  ok,
  formerr,  // the header is readable (id valid) but the message is not: answer FORMERR
  drop,     // shorter than a header: nothing to answer
};

// Parses `wire`. With `want_records`, fills answer and authority. A message with no
// question parses as formerr (qdcount != 1); bytes after the last record are accepted.
ParseStatus parse_message(std::span<const std::uint8_t> wire, Message& out, bool want_records = false);

// "A", "AAAA", "TXT", "CNAME", "SOA", "NS", "ANY" or "TYPEnnn"; and back (0 when unknown).
std::string type_name(std::uint16_t type);
std::uint16_t type_from_name(std::string_view name);

}  // namespace dnsarena::dns

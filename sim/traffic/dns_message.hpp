// DNS messages for the synthetic upstream and the load client: parsing untrusted wire
// data with libknot (knot_pkt_parse) into a small plain struct, and building queries.
//
// Parsing copies what the callers need (header fields, the question as received, EDNS
// payload/DO/ECS and, on request, the answer and authority records) so no libknot type
// leaks into the rest of sim/traffic. Cost: one knot_pkt allocation per message; the
// upstream and load client run at tens of thousands of messages per second, far from
// where that matters.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "sim/workload/entry_generator.hpp"

namespace dnsarena::sim::traffic {

inline constexpr std::uint16_t kTypeA = 1, kTypeNS = 2, kTypeCNAME = 5, kTypeSOA = 6, kTypeTXT = 16,
                               kTypeAAAA = 28, kTypeOPT = 41, kTypeANY = 255;
inline constexpr std::uint8_t kRcodeNoError = 0, kRcodeFormErr = 1, kRcodeServFail = 2,
                              kRcodeNxDomain = 3, kRcodeNotImp = 4, kRcodeRefused = 5;
inline constexpr std::uint16_t kOptionEcs = 8;

// EDNS Client Subnet (RFC 7871). Address in network order, bits past source cleared.
struct EcsOption {
  bool present = false;
  std::uint16_t family = 0;  // 1 IPv4, 2 IPv6
  std::uint8_t source = 0;
  std::uint8_t scope = 0;
  std::array<std::uint8_t, 16> address{};
};

struct Record {
  std::string owner;  // text, lowercase as sent
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  Bytes rdata;        // wire form, names inside decompressed
};

struct Message {
  std::uint16_t id = 0;
  bool qr = false, aa = false, tc = false, rd = false;
  std::uint8_t opcode = 0;
  std::uint16_t rcode = 0;     // header rcode, extended by EDNS when present
  Bytes qname;                 // wire form, case as received
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
// question parses as formerr for queries (qdcount != 1).
ParseStatus parse_message(std::span<const std::uint8_t> wire, Message& out, bool want_records = false);

// Builds a query: RD set, one question, an OPT record (payload 1232) when `edns` or
// when `ecs.present`, carrying the ECS option when present.
Bytes build_query(std::uint16_t id, std::span<const std::uint8_t> qname_wire, std::uint16_t qtype,
                  bool edns, const EcsOption& ecs);

// "A", "AAAA", "TXT", "CNAME", "SOA", "NS", "ANY" or "TYPEnnn"; and back (0 when unknown).
std::string type_name(std::uint16_t type);
std::uint16_t type_from_name(std::string_view name);

}  // namespace dnsarena::sim::traffic

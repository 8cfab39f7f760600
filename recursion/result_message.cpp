// SPDX-License-Identifier: GPL-3.0-or-later
#include "recursion/result_message.hpp"

#include <cstddef>

namespace dnsarena::recursion {

namespace {

void put16(Bytes& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

void put32(Bytes& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v));
}

constexpr std::uint16_t kTypeRrsig = 46;

// One record of `s` (of `type`: the set's, or RRSIG), appended, unless the count is full.
void put_record(Bytes& out, std::size_t& count, const dnssec::Rrset& s, std::uint16_t type, const Bytes& rd) {
  if (count == 0xFFFF || rd.size() > 0xFFFF) return;
  out += s.owner;
  put16(out, type);
  put16(out, s.klass);
  put32(out, s.ttl);
  put16(out, static_cast<std::uint16_t>(rd.size()));
  out += rd;
  ++count;
}

// Records of `section` with their RRSIGs, appended; returns how many.
std::uint16_t put_section(Bytes& out, const std::vector<dnssec::Rrset>& section) {
  std::size_t count = 0;
  for (const dnssec::Rrset& s : section) {
    for (const Bytes& rd : s.rdata) put_record(out, count, s, s.type, rd);
    for (const Bytes& sig : s.rrsigs) put_record(out, count, s, kTypeRrsig, sig);
  }
  return static_cast<std::uint16_t>(count);
}

}  // namespace

Bytes result_message(const Bytes& qname, std::uint16_t qtype, const Result& result) {
  Bytes out(12, 0);
  out[2] = 0x81;  // QR, RD
  out[3] = static_cast<std::uint8_t>(0x80 | (result.rcode & 0x0F));  // RA, rcode
  out[5] = 1;     // QDCOUNT
  out += qname;
  put16(out, qtype);
  put16(out, 1);  // IN
  const std::uint16_t an = put_section(out, result.answer);
  const std::uint16_t ns = put_section(out, result.authority);
  out[6] = static_cast<std::uint8_t>(an >> 8);
  out[7] = static_cast<std::uint8_t>(an);
  out[8] = static_cast<std::uint8_t>(ns >> 8);
  out[9] = static_cast<std::uint8_t>(ns);
  return out;
}

}  // namespace dnsarena::recursion

// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/wire_query.hpp"

#include <cctype>

#include "dns/knot_packet.hpp"

namespace dnsarena::interop {

std::string QueryShape::describe() const {
  std::string s = tcp ? "tcp" : "udp";
  if (!edns) return s + " noedns" + (cd ? " cd" : "");
  s += " edns=" + std::to_string(payload);
  if (edns_version) s += " v" + std::to_string(edns_version);
  return s + (do_bit ? " do" : "") + (cd ? " cd" : "");
}

std::vector<std::uint8_t> build_query(std::uint16_t id, const std::string& qname, std::uint16_t qtype,
                                      const QueryShape& shape) {
  auto u8 = [](unsigned v) { return static_cast<std::uint8_t>(v); };
  std::vector<std::uint8_t> q{u8(id >> 8), u8(id), 0x01 /* RD */, u8(shape.cd ? 0x10 : 0), 0, 1, 0, 0, 0, 0, 0,
                              u8(shape.edns ? 1 : 0)};
  std::size_t start = qname == "." ? 1 : 0;  // the root: no label before the terminal zero
  while (start < qname.size()) {
    std::size_t dot = qname.find('.', start);
    if (dot == std::string::npos) dot = qname.size();
    q.push_back(u8(dot - start));
    q.insert(q.end(), qname.begin() + static_cast<long>(start), qname.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.insert(q.end(), {0, u8(qtype >> 8), u8(qtype), 0, 1});
  if (shape.edns)  // OPT: root owner, type 41, class = payload, TTL = ext-rcode|version|DO|Z, no rdata
    q.insert(q.end(), {0, 0, 41, u8(shape.payload >> 8), u8(shape.payload), 0, shape.edns_version,
                       u8(shape.do_bit ? 0x80 : 0), 0, 0, 0});
  return q;
}

std::string random_case(const std::string& name, std::mt19937_64& rng) {
  std::string s = name;
  for (char& c : s)
    if (std::isalpha(static_cast<unsigned char>(c)))
      c = static_cast<char>(rng() & 1 ? std::toupper(static_cast<unsigned char>(c))
                                      : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string type_name(std::uint16_t qtype) {
  char buf[32];
  if (knot_rrtype_to_string(qtype, buf, sizeof buf) < 0) return "TYPE" + std::to_string(qtype);
  return buf;
}

}  // namespace dnsarena::interop

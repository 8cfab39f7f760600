// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/recursion/answer_set.hpp"

#include <cstdio>

#include "dns/query_builder.hpp"
#include "tests/workers/serve_harness.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::test {

std::string AnswerSet::text() const {
  std::string out = "rcode " + std::to_string(rcode) + "\n";
  for (const std::string& r : records) out += "  " + r + "\n";
  return out;
}

AnswerSet answer_set(int rcode, const std::vector<dns::Record>& answer) {
  AnswerSet s;
  s.rcode = rcode;
  for (const dns::Record& r : answer) {
    std::string line = r.owner + " " + dns::type_name(r.type) + " ";
    for (std::uint8_t b : r.rdata) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", b);
      line += hex;
    }
    s.records.insert(line);
  }
  return s;
}

AnswerSet ask_resolver(std::uint16_t port, const std::string& qname, std::uint16_t qtype) {
  const auto name = wire::name_to_wire(qname);
  const common::Bytes q = dns::build_query({.id = 0x4242, .qname = name, .qtype = qtype});  // RD set
  const std::vector<std::uint8_t> query(q.begin(), q.end());
  // As a stub does: asked again after 2 s without a reply. Unbound (1.17.1 here) drops a
  // reply that took longer than its discard-timeout (1.9 s; two timeouts at a silent
  // server take that long) and answers the repeated question from its cache.
  DnsReply r;
  for (int attempt = 0; attempt < 3 && !r.answered; ++attempt) r = udp_exchange(port, query, std::chrono::seconds(2));
  if (r.answered && r.tc()) r = tcp_exchange(port, query, std::chrono::seconds(5));
  dns::Message m;
  if (!r.answered || dns::parse_message(r.wire, m, true) != dns::ParseStatus::ok) return {};
  return answer_set(m.rcode, m.answer);
}

}  // namespace dnsarena::test

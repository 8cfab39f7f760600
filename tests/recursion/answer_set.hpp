// SPDX-License-Identifier: GPL-3.0-or-later
// What two resolvers' answers are compared on: the rcode and the answer section as a
// sorted set of "owner type rdata-hex" lines (TTLs and order aside: they differ between
// correct resolvers), and asking a resolver on 127.0.0.1 one question.
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "dns/message.hpp"

namespace dnsarena::test {

struct AnswerSet {
  int rcode = -1;  // -1: no reply, or not parsed
  std::set<std::string> records;
  bool operator==(const AnswerSet&) const = default;
  std::string text() const;
};

// The answer set of the records of `answer` with `rcode`.
AnswerSet answer_set(int rcode, const std::vector<dns::Record>& answer);
// Asks (qname, qtype) of the resolver on 127.0.0.1:port over UDP (again over TCP when
// the reply is truncated), RD set, EDNS 1232.
AnswerSet ask_resolver(std::uint16_t port, const std::string& qname, std::uint16_t qtype);

}  // namespace dnsarena::test

// SPDX-License-Identifier: GPL-3.0-or-later
// The answers a matched rule writes (policy/policy_answer.hpp): rcode, records, EDE, TC.
#include <catch2/catch.hpp>

#include <cstring>

#include "policy/policy_answer.hpp"
#include "policy_test_util.hpp"
#include "wire/constants.hpp"

namespace dnsarena::policy {
namespace {

using wire::get16;

dns::ClientQuery query(const std::string& name, std::uint16_t qtype, bool edns) {
  dns::ClientQuery q;
  q.id = 0x1234;
  q.flags = wire::kFlagRd;
  const auto w = wire::name_to_wire(name);
  std::memcpy(q.qname_storage.data(), w.data(), w.size());
  q.qname_len = static_cast<std::uint8_t>(w.size());
  q.qtype = qtype;
  q.edns = edns;
  q.udp_size = edns ? 1232 : 512;
  return q;
}

// The EDE INFO-CODE in the answer's OPT record (its last option), or -1 without one.
int ede_of(const std::uint8_t* out, std::size_t n) {
  if (get16(out + 10) == 0 || n < 6) return -1;
  if (get16(out + n - 6) != dns::kOptionCodeEde) return -1;
  return get16(out + n - 2);
}

const auto kZone = "$TTL 300\n@ SOA ns. admin. 1 1 1 1 1\n"
                   "nx.test CNAME .\nnodata.test CNAME *.\ndrop.test CNAME rpz-drop.\npass.test CNAME rpz-passthru.\n"
                   "data.test A 192.0.2.1\ndata.test A 192.0.2.2\ndata.test TXT \"walled\"\n"
                   "*.garden.test CNAME walled.garden.example.\n";

TEST_CASE("blocking actions answer with their rcode and EDE on EDNS only", "[policy]") {
  const auto c = test::compile_zones({{"rpz.", kZone}}, {"no.test refuse"});
  std::uint8_t out[4096];
  for (bool edns : {true, false}) {
    auto ask = [&](const std::string& name) {
      const dns::ClientQuery q = query(name, wire::kTypeA, edns);
      return std::make_pair(write_policy_answer(c->view, c->find(name), q, 1232, out, sizeof out), q);
    };
    auto [nx, q1] = ask("nx.test.");
    REQUIRE(nx.decided);
    REQUIRE(get16(out) == 0x1234);
    REQUIRE((get16(out + 2) & 0xF) == wire::kRcodeNxDomain);
    REQUIRE(get16(out + 6) == 0);
    REQUIRE(ede_of(out, nx.size) == (edns ? 15 : -1));
    auto [nd, q2] = ask("nodata.test.");
    REQUIRE((get16(out + 2) & 0xF) == wire::kRcodeNoError);
    REQUIRE(get16(out + 6) == 0);
    REQUIRE(ede_of(out, nd.size) == (edns ? 15 : -1));
    auto [rf, q3] = ask("a.no.test.");
    REQUIRE((get16(out + 2) & 0xF) == wire::kRcodeRefused);
    REQUIRE(ede_of(out, rf.size) == (edns ? 18 : -1));
    auto [dr, q4] = ask("drop.test.");
    REQUIRE(dr.decided);
    REQUIRE(dr.size == 0);
    auto [ps, q5] = ask("pass.test.");
    REQUIRE_FALSE(ps.decided);
  }
}

TEST_CASE("local data answers the query type's records in the asker's name", "[policy]") {
  const auto c = test::compile_zones({{"rpz.", kZone}});
  std::uint8_t out[4096];
  const dns::ClientQuery q = query("DATA.test.", wire::kTypeA, true);
  const PolicyAnswer a = write_policy_answer(c->view, c->find("DATA.test."), q, 1232, out, sizeof out);
  REQUIRE(a.decided);
  REQUIRE((get16(out + 2) & 0xF) == 0);
  REQUIRE(get16(out + 6) == 2);   // ANCOUNT: the two A records, not the TXT
  REQUIRE(get16(out + 10) == 1);  // the OPT record moved after the answers
  const std::size_t first = 12 + q.qname_len + 4;
  REQUIRE(get16(out + first) == 0xC00C);
  REQUIRE(get16(out + first + 2) == wire::kTypeA);
  REQUIRE(get16(out + first + 10) == 4);
  REQUIRE(std::memcmp(out + first + 12, "\xC0\x00\x02\x01", 4) == 0);
  REQUIRE(std::memcmp(out + first + 16 + 12, "\xC0\x00\x02\x02", 4) == 0);
  REQUIRE(out[first + 32] == 0);  // the OPT's root owner
  REQUIRE(get16(out + first + 33) == 41);
  REQUIRE(ede_of(out, a.size) == 17);
  // A type the name has no data of: NODATA, still filtered.
  const dns::ClientQuery aaaa = query("data.test.", 28, true);
  const PolicyAnswer nodata = write_policy_answer(c->view, c->find("data.test."), aaaa, 1232, out, sizeof out);
  REQUIRE(get16(out + 6) == 0);
  REQUIRE(ede_of(out, nodata.size) == 17);
  // A `*.` CNAME answers every type, owned by the query name.
  const dns::ClientQuery mx = query("a.b.garden.test.", 15, false);
  const PolicyAnswer cname = write_policy_answer(c->view, c->find("a.b.garden.test."), mx, 512, out, sizeof out);
  REQUIRE(get16(out + 6) == 1);
  REQUIRE(get16(out + 10) == 0);
  const std::size_t at = 12 + mx.qname_len + 4;
  REQUIRE(get16(out + at + 2) == wire::kTypeCname);
  REQUIRE(wire::wire_to_text({out + at + 12, cname.size - at - 12}) == "walled.garden.example.");
}

TEST_CASE("local data over the client's limit is sent empty with TC", "[policy]") {
  std::string body = "$TTL 60\n@ SOA ns. admin. 1 1 1 1 1\n";
  for (int i = 0; i < 40; ++i) body += "big.test TXT \"" + std::string(200, 'a' + i % 26) + std::to_string(i) + "\"\n";
  const auto c = test::compile_zones({{"rpz.", body}});
  std::uint8_t out[4096];
  const dns::ClientQuery q = query("big.test.", 16, false);
  const PolicyAnswer a = write_policy_answer(c->view, c->find("big.test."), q, 512, out, sizeof out);
  REQUIRE(a.decided);
  REQUIRE((get16(out + 2) & wire::kFlagTc) != 0);
  REQUIRE(get16(out + 6) == 0);
  REQUIRE(a.size <= 512);
}

}  // namespace
}  // namespace dnsarena::policy

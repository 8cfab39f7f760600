// SPDX-License-Identifier: GPL-3.0-or-later
// The policy on an answer's CNAME chain (policy/answer_chain.hpp) and the SOA of negative
// policy answers (policy/policy_answer.hpp), on messages laid out as the cache's response
// writer lays them out.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "policy/answer_chain.hpp"
#include "policy/policy_answer.hpp"
#include "policy_test_util.hpp"
#include "wire/constants.hpp"

namespace dnsarena::policy {
namespace {

using wire::get16;
using Bytes = std::vector<std::uint8_t>;

// A response as cache/response_writer.hpp writes it: the question, answer records whose
// owner is the query name (a pointer to it) or a pointer to an earlier name, then the OPT.
struct Message {
  Bytes b;
  std::size_t names[16] = {};  // where each name written by `name()` starts
  unsigned answers = 0;
  explicit Message(const std::string& qname, std::uint16_t qtype = 1) {
    b = {0x12, 0x34, 0x81, 0xA0, 0, 1, 0, 0, 0, 0, 0, 0};  // QR RD RA AD
    put_name(qname);
    put16(qtype);
    put16(1);
  }
  void put16(std::uint16_t v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
  }
  std::size_t put_name(const std::string& text) {
    const std::size_t at = b.size();
    const auto w = wire::name_to_wire(text);
    b.insert(b.end(), w.begin(), w.end());
    return at;
  }
  // A record owned by the name at `owner_at` (12: the question), rdata a name or bytes.
  Message& rr(std::size_t owner_at, std::uint16_t type, const std::string& target_name, const Bytes& rdata = {}) {
    put16(static_cast<std::uint16_t>(0xC000 | owner_at));
    put16(type);
    put16(1);
    put16(0);
    put16(300);
    const std::size_t len_at = b.size();
    put16(0);
    const std::size_t start = b.size();
    if (!target_name.empty()) put_name(target_name);
    b.insert(b.end(), rdata.begin(), rdata.end());
    b[len_at] = static_cast<std::uint8_t>((b.size() - start) >> 8);
    b[len_at + 1] = static_cast<std::uint8_t>(b.size() - start);
    ++answers;
    b[6] = 0;
    b[7] = static_cast<std::uint8_t>(answers);
    return *this;
  }
  std::size_t last_rdata() const { return last_rdata_at; }
  std::size_t last_rdata_at = 0;
  Message& cname(std::size_t owner_at, const std::string& target) {
    last_rdata_at = b.size() + 12;
    return rr(owner_at, wire::kTypeCname, target);
  }
  Message& a(std::size_t owner_at) { return rr(owner_at, wire::kTypeA, "", {192, 0, 2, 1}); }
  Message& opt() {
    b.insert(b.end(), {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0});
    b[11] = 1;
    return *this;
  }
};

struct Parsed {
  unsigned rcode = 0;
  bool ad = false, tc = false;
  unsigned counts[4] = {};
  std::vector<std::string> records;  // "section owner type"
  int ede = -1;
  std::uint32_t soa_ttl = 0;
};

std::string name_at(const std::uint8_t* m, std::size_t size, std::size_t at, std::size_t* end) {
  std::string s;
  bool jumped = false;
  for (int hops = 0; at < size && hops < 64;) {
    const std::uint8_t l = m[at];
    if ((l & 0xC0) == 0xC0) {
      if (!jumped && end) *end = at + 2;
      jumped = true;
      at = ((l & 0x3F) << 8) | m[at + 1];
      ++hops;
      continue;
    }
    if (l == 0) {
      if (!jumped && end) *end = at + 1;
      return s.empty() ? "." : s;
    }
    s.append(reinterpret_cast<const char*>(m + at + 1), l);
    s += '.';
    at += l + 1;
  }
  return "?";
}

Parsed parse(const std::uint8_t* m, std::size_t size) {
  Parsed p;
  REQUIRE(size >= 12);
  p.rcode = get16(m + 2) & 0xF;
  p.ad = get16(m + 2) & wire::kFlagAd;
  p.tc = get16(m + 2) & wire::kFlagTc;
  for (int i = 0; i < 4; ++i) p.counts[i] = get16(m + 4 + 2 * i);
  std::size_t pos = 12;
  name_at(m, size, pos, &pos);
  pos += 4;
  for (unsigned s = 1; s < 4; ++s)
    for (unsigned i = 0; i < p.counts[s]; ++i) {
      std::size_t end = 0;
      const std::string owner = name_at(m, size, pos, &end);
      const std::uint16_t type = get16(m + end);
      const std::size_t rdlen = get16(m + end + 8);
      REQUIRE(end + 10 + rdlen <= size);
      if (type == 41) {
        if (rdlen >= 6 && get16(m + end + 10 + rdlen - 6) == 15) p.ede = get16(m + end + 10 + rdlen - 2);
      } else {
        std::string rec = std::to_string(s) + " " + owner + " " + std::to_string(type);
        if (type == 5) rec += " " + name_at(m, size, end + 10, nullptr);
        if (type == 6)
          p.soa_ttl = (std::uint32_t{m[end + 4]} << 24) | (m[end + 5] << 16) | (m[end + 6] << 8) | m[end + 7];
        p.records.push_back(rec);
      }
      pos = end + 10 + rdlen;
    }
  REQUIRE(pos == size);
  return p;
}

const char* kRpz = "$TTL 300\n@ SOA ns.rpz. admin.rpz. 7 3600 600 86400 120\n@ NS ns.rpz.\n"
                   "blocked.example CNAME .\n"
                   "empty.example CNAME *.\n"
                   "drop.example CNAME rpz-drop.\n"
                   "pass.example CNAME rpz-passthru.\n"
                   "walled.example A 192.0.2.66\n"
                   "*.target.example CNAME .\n";

ChainVerdict check(const test::Compiled& c, Message& m, std::uint16_t qtype = 1, std::size_t limit = 1232) {
  m.b.resize(m.b.size());
  const std::size_t size = m.b.size();
  m.b.resize(4096);
  const std::size_t qname_len = wire::skip_wire_name(m.b, 12) - 12;
  ChainVerdict v = check_answer_chain(c.view, qtype, qname_len, limit, m.b.data(), size, m.b.size());
  if (!v.decided) REQUIRE(v.size == size);
  m.b.resize(v.size);
  return v;
}

TEST_CASE("a CNAME to a blocked name makes the answer NXDOMAIN with the chain and the zone's SOA", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}});
  Message m("Alias.example.");
  m.cname(12, "blocked.example.");
  m.a(m.last_rdata()).opt();
  const ChainVerdict v = check(*c, m);
  REQUIRE(v.decided);
  REQUIRE(v.match.action == Action::nxdomain);
  const Parsed p = parse(m.b.data(), m.b.size());
  CHECK(p.rcode == 3);
  CHECK_FALSE(p.ad);
  CHECK(p.records == std::vector<std::string>{"1 Alias.example. 5 blocked.example.", "2 rpz. 6"});
  CHECK(p.soa_ttl == 120);  // min(SOA TTL 300, MINIMUM 120)
  CHECK(p.ede == 15);
  CHECK(p.counts[3] == 1);
}

TEST_CASE("answers without a CNAME, or whose chain no rule covers, stand as written", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}});
  Message plain("blocked.example.");  // the query name: the gate's business, not the chain's
  plain.a(12).a(12).opt();
  const Bytes before = plain.b;
  REQUIRE_FALSE(check(*c, plain).match);
  CHECK(plain.b == before);
  Message chain("alias.example.");
  chain.cname(12, "fine.example.");
  chain.a(chain.last_rdata()).opt();
  REQUIRE_FALSE(check(*c, chain).match);
  Message asked("alias.example.", wire::kTypeCname);  // the CNAME itself asked for: not a chain
  asked.cname(12, "blocked.example.").opt();
  REQUIRE_FALSE(check(*c, asked, wire::kTypeCname).match);
}

TEST_CASE("each action along the chain: NODATA, local data, DROP, PASSTHRU", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}});
  {
    Message m("a.example.");
    m.cname(12, "b.example.");
    const std::size_t b = m.last_rdata();
    m.cname(b, "empty.example.");
    m.a(m.last_rdata()).opt();
    REQUIRE(check(*c, m).decided);
    const Parsed p = parse(m.b.data(), m.b.size());
    CHECK(p.rcode == 0);
    CHECK(p.records == std::vector<std::string>{"1 a.example. 5 b.example.", "1 b.example. 5 empty.example.", "2 rpz. 6"});
    CHECK(p.ede == 15);
  }
  {
    Message m("a.example.");
    m.cname(12, "walled.example.");
    m.a(m.last_rdata()).a(m.last_rdata()).opt();
    REQUIRE(check(*c, m).decided);
    const Parsed p = parse(m.b.data(), m.b.size());
    CHECK(p.rcode == 0);
    CHECK(p.records == std::vector<std::string>{"1 a.example. 5 walled.example.", "1 walled.example. 1"});
    CHECK(p.ede == 17);
  }
  {
    Message m("a.example.");
    m.cname(12, "drop.example.").opt();
    const ChainVerdict v = check(*c, m);
    CHECK(v.decided);
    CHECK(v.size == 0);
  }
  {
    Message m("a.example.");
    m.cname(12, "pass.example.");
    const std::size_t p = m.last_rdata();
    m.cname(p, "blocked.example.").opt();
    const ChainVerdict v = check(*c, m);
    CHECK_FALSE(v.decided);  // PASSTHRU ends the checks
    CHECK(v.match.action == Action::passthru);
  }
  {
    const auto q = test::compile_zones({{"rpz.", std::string(kRpz) + "exempt.example CNAME rpz-passthru.\n"}});
    Message m("exempt.example.");
    m.cname(12, "blocked.example.").opt();
    CHECK_FALSE(check(*q, m).decided);  // a PASSTHRU on the query name exempts its answer
  }
}

TEST_CASE("a DNAME's substituted name is checked with its CNAME, or alone", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}});
  const Bytes none;
  {
    Message m("x.dname.example.");
    const std::size_t dname_owner = 12 + 2;  // "dname.example." inside the question
    m.rr(dname_owner, wire::kTypeDname, "target.example.");
    m.cname(12, "x.target.example.");
    m.a(m.last_rdata()).opt();
    REQUIRE(check(*c, m).decided);
    const Parsed p = parse(m.b.data(), m.b.size());
    CHECK(p.rcode == 3);
    CHECK(p.records == std::vector<std::string>{"1 dname.example. 39", "1 x.dname.example. 5 x.target.example.",
                                                "2 rpz. 6"});
  }
  {
    Message m("x.dname.example.");
    m.rr(14, wire::kTypeDname, "target.example.").opt();  // no CNAME (a broken upstream)
    REQUIRE(check(*c, m).decided);
    const Parsed p = parse(m.b.data(), m.b.size());
    CHECK(p.rcode == 3);
    CHECK(p.records == std::vector<std::string>{"1 dname.example. 39", "2 rpz. 6"});
  }
}

TEST_CASE("the chain check never reads past a hostile answer", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}});
  Message base("alias.example.");
  base.cname(12, "blocked.example.");
  base.a(base.last_rdata()).opt();
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    Bytes b = base.b;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) b[12 + rng() % (b.size() - 12)] = static_cast<std::uint8_t>(rng());
    if (rng() % 4 == 0) b.resize(12 + rng() % (b.size() - 12));
    const std::size_t size = b.size();
    b.resize(size + 600);  // the rewrite may grow it (SOA, EDE) within the capacity given
    const std::size_t qname_len = wire::skip_wire_name({b.data(), size}, 12);
    const ChainVerdict v =
        check_answer_chain(c->view, 1, qname_len ? qname_len - 12 : rng() % 40, 1232, b.data(), size, b.size());
    REQUIRE(v.size <= b.size());
  }
}

TEST_CASE("policy NXDOMAIN and NODATA carry the zone's SOA, local zones the apex's SOA", "[policy][chain]") {
  const auto c = test::compile_zones({{"rpz.", kRpz}}, {"local.test static"},
                                     {"local.test. 3600 SOA ns.local.test. admin.local.test. 1 3600 600 86400 30"});
  dns::ClientQuery q;
  q.id = 1;
  q.flags = wire::kFlagRd;
  auto ask = [&](const std::string& name, std::uint16_t type) {
    const auto w = wire::name_to_wire(name);
    std::memcpy(q.qname_storage.data(), w.data(), w.size());
    q.qname_len = static_cast<std::uint8_t>(w.size());
    q.qtype = type;
    q.edns = true;
    q.udp_size = 1232;
    std::uint8_t out[4096];
    const PolicyAnswer a = write_policy_answer(c->view, c->find(name), q, 1232, out, sizeof out);
    REQUIRE(a.decided);
    return parse(out, a.size);
  };
  Parsed p = ask("blocked.example.", 1);
  CHECK(p.rcode == 3);
  CHECK(p.records == std::vector<std::string>{"2 rpz. 6"});
  CHECK(p.soa_ttl == 120);
  CHECK(p.ede == 15);
  p = ask("empty.example.", 28);
  CHECK(p.rcode == 0);
  CHECK(p.records == std::vector<std::string>{"2 rpz. 6"});
  p = ask("walled.example.", 28);  // local data without the type: NODATA with the SOA
  CHECK(p.records == std::vector<std::string>{"2 rpz. 6"});
  CHECK(p.ede == 17);
  p = ask("nothing.local.test.", 1);  // a static local zone: its apex's SOA, TTL min(3600, 30)
  CHECK(p.rcode == 3);
  CHECK(p.records == std::vector<std::string>{"2 local.test. 6"});
  CHECK(p.soa_ttl == 30);
  const auto bare = test::compile_zones({}, {"bare.test static"});  // no SOA given: none sent
  const Match m = bare->find("x.bare.test.");
  REQUIRE(m);
  std::uint8_t out[4096];
  const auto w = wire::name_to_wire("x.bare.test.");
  std::memcpy(q.qname_storage.data(), w.data(), w.size());
  q.qname_len = static_cast<std::uint8_t>(w.size());
  const PolicyAnswer a = write_policy_answer(bare->view, m, q, 1232, out, sizeof out);
  CHECK(parse(out, a.size).records.empty());
}

}  // namespace
}  // namespace dnsarena::policy

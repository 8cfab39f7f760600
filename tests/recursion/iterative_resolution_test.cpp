// SPDX-License-Identifier: GPL-3.0-or-later
// The iterative resolver's state machine against replies built in memory: each test's
// responder plays the authoritatives (a function of the query), and the queries the
// machine sends are checked: priming, referrals with and without glue, glue outside the
// bailiwick refused, QNAME minimisation and its relaxed fallback, lame servers, chains,
// and the bounds (NS names per referral, the query budget, the chain length).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "recursion/iterative_resolution.hpp"
#include "wire/constants.hpp"

namespace {

using dnsarena::common::Bytes;
using dnsarena::dnssec::Response;
using dnsarena::dnssec::Rrset;
using namespace dnsarena::recursion;
namespace wire = dnsarena::wire;

Bytes N(const std::string& text) { return dnsarena::dnssec::name_from_text(text); }

Bytes A(const std::string& dotted) {
  const auto a = ServerAddress::parse(dotted);
  REQUIRE(a);
  return Bytes(a->v4.begin(), a->v4.end());
}

Rrset set(const std::string& owner, std::uint16_t type, std::vector<Bytes> rdata) {
  Rrset s;
  s.owner = N(owner);
  s.type = type;
  s.ttl = 3600;
  s.rdata = std::move(rdata);
  return s;
}

Response reply_to(const Query& q, std::uint16_t rcode = 0, bool aa = true) {
  Response r;
  r.qname = q.qname;
  r.qtype = q.qtype;
  r.rcode = rcode;
  r.aa = aa;
  return r;
}

// A referral to `zone` served by `ns` (name, glue address or "" for none).
Response referral(const Query& q, const std::string& zone, const std::vector<std::pair<std::string, std::string>>& ns) {
  Response r = reply_to(q, 0, false);
  std::vector<Bytes> names;
  for (const auto& [name, addr] : ns) {
    names.push_back(N(name));
    if (!addr.empty()) r.additional.push_back(set(name, wire::kTypeA, {A(addr)}));
  }
  r.authority.push_back(set(zone, wire::kTypeNs, names));
  return r;
}

Response nodata(const Query& q) {
  Response r = reply_to(q);
  r.authority.push_back(set(dnsarena::dnssec::name_text(q.zone), wire::kTypeSoa, {Bytes{0}}));
  return r;
}

// The root of a tree with com. at 10.0.0.2 and org. at 10.0.0.4 (glue).
Response com_and_org_referral(const Query& q) {
  if (dnsarena::dnssec::is_subdomain(q.qname, N("org."))) return referral(q, "org.", {{"ns.org.", "10.0.0.4"}});
  return referral(q, "com.", {{"ns.com.", "10.0.0.2"}});
}

Delegation hints() {
  Delegation d;
  d.zone = N(".");
  d.servers.push_back({N("a.root."), {*ServerAddress::parse("10.0.0.1")}});
  return d;
}

using Responder = std::function<std::optional<Response>(const Query&)>;

struct Run {
  Result result;
  std::vector<std::string> queries;  // "name type @address"
};

Run drive(IterativeResolution& r, const Responder& respond) {
  Run run;
  Query q;
  while (r.need(q) == IterativeResolution::Step::query) {
    run.queries.push_back(dnsarena::dnssec::name_text(q.qname) + " " + std::to_string(q.qtype) + " @" + q.server.text());
    REQUIRE(run.queries.size() < 200);
    if (const auto reply = respond(q))
      r.provide(*reply);
    else
      r.provide_failure();
  }
  run.result = r.result();
  return run;
}

bool is(const Query& q, const std::string& name) { return q.qname == N(name); }

// The root primes; com. at 10.0.0.2 (glue); example.com. at 10.0.0.3 (glue); www has an A.
std::optional<Response> simple_tree(const Query& q) {
  const std::string at = q.server.text();
  if (at == "10.0.0.1") {
    if (is(q, ".") && q.qtype == wire::kTypeNs) {
      Response r = reply_to(q);
      r.answer.push_back(set(".", wire::kTypeNs, {N("a.root.")}));
      r.additional.push_back(set("a.root.", wire::kTypeA, {A("10.0.0.1")}));
      return r;
    }
    return referral(q, "com.", {{"ns.com.", "10.0.0.2"}});
  }
  if (at == "10.0.0.2") return referral(q, "example.com.", {{"ns.example.com.", "10.0.0.3"}});
  if (at == "10.0.0.3") {
    if (is(q, "www.example.com.")) {
      Response r = reply_to(q);
      r.answer.push_back(set("www.example.com.", wire::kTypeA, {A("192.0.2.1")}));
      return r;
    }
    return nodata(q);
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("priming then one minimised query per cut down to the answer", "[recursion]") {
  MemoryDelegations store;
  IterativeResolution r(N("WWW.Example.com."), wire::kTypeA, hints(), store);
  const Run run = drive(r, simple_tree);
  CHECK(run.result.rcode == 0);
  REQUIRE(run.result.answer.size() == 1);
  CHECK(run.result.answer[0].rdata[0] == A("192.0.2.1"));
  CHECK(run.queries == std::vector<std::string>{". 2 @10.0.0.1", "com. 1 @10.0.0.1", "example.com. 1 @10.0.0.2",
                                                 "www.example.com. 1 @10.0.0.3"});
  CHECK(store.closest(N("example.com."))->servers[0].addresses.size() == 1);

  SECTION("a second resolution starts at the learned cut") {
    IterativeResolution again(N("www.example.com."), wire::kTypeA, hints(), store);
    const Run second = drive(again, simple_tree);
    CHECK(second.queries == std::vector<std::string>{"www.example.com. 1 @10.0.0.3"});
  }
  SECTION("without minimisation the full name goes to every cut") {
    MemoryDelegations fresh;
    IterativeResolution full(N("www.example.com."), wire::kTypeA, hints(), fresh, {.qname_minimisation = false});
    const Run f = drive(full, simple_tree);
    CHECK(f.queries == std::vector<std::string>{". 2 @10.0.0.1", "www.example.com. 1 @10.0.0.1",
                                                 "www.example.com. 1 @10.0.0.2", "www.example.com. 1 @10.0.0.3"});
  }
}

TEST_CASE("glue outside the referring server's bailiwick is not used: the NS name is resolved", "[recursion]") {
  MemoryDelegations store;
  const auto respond = [](const Query& q) -> std::optional<Response> {
    const std::string at = q.server.text();
    if (at == "10.0.0.1") {
      if (is(q, ".")) return std::nullopt;  // no priming answer: the hints stay the root
      if (is(q, "org.") || is(q, "ns.hoster.org.") || is(q, "hoster.org."))
        return referral(q, "org.", {{"ns.org.", "10.0.0.4"}});
      return referral(q, "com.", {{"ns.com.", "10.0.0.2"}});
    }
    if (at == "10.0.0.2")  // com. offers an address for a name under org.: a poisoning attempt
      return referral(q, "example.com.", {{"ns.hoster.org.", "6.6.6.6"}});
    if (at == "10.0.0.4") {
      if (is(q, "ns.hoster.org.")) {
        Response r = reply_to(q);
        r.answer.push_back(set("ns.hoster.org.", wire::kTypeA, {A("10.0.0.5")}));
        return r;
      }
      return nodata(q);  // no cut at hoster.org. in this tree
    }
    if (at == "10.0.0.5") {
      Response r = reply_to(q);
      r.answer.push_back(set("www.example.com.", wire::kTypeA, {A("192.0.2.9")}));
      return r;
    }
    FAIL("query to " << at);
    return std::nullopt;
  };
  IterativeResolution r(N("www.example.com."), wire::kTypeA, hints(), store);
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 0);
  for (const std::string& q : run.queries) CHECK(q.find("6.6.6.6") == std::string::npos);
  CHECK(run.queries.back() == "www.example.com. 1 @10.0.0.5");
}

TEST_CASE("NXNSAttack: a referral to many glueless NS names resolves at most five of them", "[recursion]") {
  MemoryDelegations store;
  unsigned sub_queries = 0;
  const auto respond = [&](const Query& q) -> std::optional<Response> {
    if (q.server.text() == "10.0.0.1") {
      if (is(q, ".")) return std::nullopt;
      if (dnsarena::dnssec::is_subdomain(q.qname, N("victim."))) {
        ++sub_queries;
        return reply_to(q, 2);  // the victim's servers fail
      }
      std::vector<std::pair<std::string, std::string>> ns;
      for (int i = 0; i < 40; ++i) ns.emplace_back("n" + std::to_string(i) + ".victim.", "");
      return referral(q, "attacker.", ns);
    }
    return std::nullopt;
  };
  IterativeResolution r(N("x.attacker."), wire::kTypeA, hints(), store);
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 2);
  unsigned victim_names = 0;
  for (const std::string& q : run.queries)
    if (q.find(".victim. 1 ") != std::string::npos && q.rfind("n", 0) == 0) ++victim_names;
  CHECK(victim_names <= 5 * 2);  // each name at most minimised + full
  CHECK(r.queries_sent() <= 32);
}

TEST_CASE("the query budget ends a resolution whose servers never answer", "[recursion]") {
  MemoryDelegations store;
  Delegation many = hints();
  for (int i = 2; i < 60; ++i) many.servers[0].addresses.push_back(*ServerAddress::parse("10.1.0." + std::to_string(i)));
  IterativeResolution r(N("www.example.com."), wire::kTypeA, many, store, {.max_queries = 20});
  const Run run = drive(r, [](const Query&) { return std::nullopt; });
  CHECK(run.result.rcode == 2);
  CHECK(run.queries.size() <= 20);
  CHECK(run.result.why.find("budget") != std::string::npos);
}

TEST_CASE("relaxed minimisation: NXDOMAIN for a minimised name makes the cut be asked the full name", "[recursion]") {
  MemoryDelegations store;
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    if (q.server.text() == "10.0.0.1") return referral(q, "com.", {{"ns.com.", "10.0.0.2"}});
    // A broken server: NXDOMAIN for the empty non-terminal, the answer for the full name.
    if (is(q, "b.com.")) return reply_to(q, 3);
    Response r = reply_to(q);
    r.answer.push_back(set("a.b.com.", wire::kTypeA, {A("192.0.2.2")}));
    return r;
  };
  IterativeResolution r(N("a.b.com."), wire::kTypeA, hints(), store);
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 0);
  CHECK(run.queries.back() == "a.b.com. 1 @10.0.0.2");
}

TEST_CASE("a lame server is skipped and when every server is lame the answer is SERVFAIL", "[recursion]") {
  MemoryDelegations store;
  bool second_good = true;
  const auto respond = [&](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    const std::string at = q.server.text();
    if (at == "10.0.0.1") return referral(q, "com.", {{"ns1.com.", "10.0.0.2"}, {"ns2.com.", "10.0.0.3"}});
    if (at == "10.0.0.2") return reply_to(q, 5);  // REFUSED
    if (at == "10.0.0.3" && second_good) {
      Response r = reply_to(q);
      r.answer.push_back(set("www.com.", wire::kTypeA, {A("192.0.2.3")}));
      return r;
    }
    return referral(q, ".", {{"a.root.", "10.0.0.1"}});  // an upward referral: lame too
  };
  // The caller's selection hears of each lame server with the zone it is lame for.
  struct Recorder final : ServerSelection {
    std::vector<std::string> lame_for;
    std::uint32_t rank(const ServerAddress&, std::span<const std::uint8_t>) const override { return 0; }
    void lame(const ServerAddress& a, std::span<const std::uint8_t> zone) override {
      lame_for.push_back(a.text() + " " + dnsarena::dnssec::name_text(Bytes(zone.begin(), zone.end())));
    }
  } recorder;
  IterativeResolution r(N("www.com."), wire::kTypeA, hints(), store);
  r.use_servers(&recorder);
  CHECK(drive(r, respond).result.rcode == 0);
  CHECK(recorder.lame_for == std::vector<std::string>{"10.0.0.2 com."});
  second_good = false;
  MemoryDelegations fresh;
  recorder.lame_for.clear();
  IterativeResolution bad(N("www.com."), wire::kTypeA, hints(), fresh);
  bad.use_servers(&recorder);
  CHECK(drive(bad, respond).result.rcode == 2);
  CHECK(recorder.lame_for == std::vector<std::string>{"10.0.0.2 com.", "10.0.0.3 com."});
}

TEST_CASE("CNAME chains across zones are followed and loops end at the chain bound", "[recursion]") {
  MemoryDelegations store;
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    if (q.server.text() == "10.0.0.1") return com_and_org_referral(q);
    Response r = reply_to(q);
    if (is(q, "a.com.")) r.answer.push_back(set("a.com.", wire::kTypeCname, {N("b.org.")}));
    if (is(q, "b.org.")) r.answer.push_back(set("b.org.", wire::kTypeA, {A("192.0.2.4")}));
    if (is(q, "loop1.com.")) r.answer.push_back(set("loop1.com.", wire::kTypeCname, {N("loop2.org.")}));
    if (is(q, "loop2.org.")) r.answer.push_back(set("loop2.org.", wire::kTypeCname, {N("loop1.com.")}));
    if (is(q, "d.x.com.")) {  // a DNAME with its synthesized CNAME
      r.answer.push_back(set("x.com.", wire::kTypeDname, {N("org.")}));
      r.answer.push_back(set("d.x.com.", wire::kTypeCname, {N("d.org.")}));
    }
    if (is(q, "d.org.")) r.answer.push_back(set("d.org.", wire::kTypeA, {A("192.0.2.5")}));
    return r.answer.empty() ? nodata(q) : r;
  };
  {
    IterativeResolution r(N("a.com."), wire::kTypeA, hints(), store);
    const Run run = drive(r, respond);
    CHECK(run.result.rcode == 0);
    CHECK(run.result.answer.size() == 2);
  }
  {
    IterativeResolution r(N("d.x.com."), wire::kTypeA, hints(), store);
    const Run run = drive(r, respond);
    CHECK(run.result.rcode == 0);
    CHECK(run.result.answer.size() == 3);
  }
  {
    IterativeResolution r(N("loop1.com."), wire::kTypeA, hints(), store);
    const Run run = drive(r, respond);
    CHECK(run.result.rcode == 2);
    CHECK(run.result.why.find("chain") != std::string::npos);
    CHECK(run.result.answer.empty());
  }
}

TEST_CASE("records outside the answering server's zone are not believed: the CNAME target is asked of its servers",
          "[recursion]") {
  MemoryDelegations store;
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    if (q.server.text() == "10.0.0.1") return com_and_org_referral(q);
    Response r = reply_to(q);
    if (q.server.text() == "10.0.0.2" && is(q, "www.com.")) {  // com. answers for org. too: forged
      r.answer.push_back(set("www.com.", wire::kTypeCname, {N("www.org.")}));
      r.answer.push_back(set("www.org.", wire::kTypeA, {A("6.6.6.6")}));
    }
    if (q.server.text() == "10.0.0.4" && is(q, "www.org.")) r.answer.push_back(set("www.org.", wire::kTypeA, {A("192.0.2.6")}));
    return r.answer.empty() ? nodata(q) : r;
  };
  IterativeResolution r(N("www.com."), wire::kTypeA, hints(), store);
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 0);
  REQUIRE(run.result.answer.size() == 2);
  CHECK(run.result.answer[1].rdata[0] == A("192.0.2.6"));
  CHECK(run.queries.back() == "www.org. 1 @10.0.0.4");
}

TEST_CASE("NXNSAttack over a chain: glueless NS names are bounded per resolution too", "[recursion]") {
  // Three attacker zones a1. a2. a3., each delegated to five glueless names of which only
  // the fifth resolves; x.a1. -> x.a2. -> x.a3. by CNAME. Five lookups per cut would be 15.
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    const std::string name = dnsarena::dnssec::name_text(q.qname);
    if (q.server.text() == "10.0.0.1") {
      if (name.size() > 1 && name[0] == 'v') return reply_to(q, 3);  // a minimised victim TLD
      if (name[0] == 'n') {
        if (name.rfind("n4.", 0) != 0) return reply_to(q, 3);
        Response r = reply_to(q);
        r.answer.push_back(set(name, wire::kTypeA, {A("10.0.0.9")}));
        return r;
      }
      const std::string zone = name.substr(name.find('a'));  // "a1." of "x.a1." or "a1."
      std::vector<std::pair<std::string, std::string>> ns;
      for (int i = 0; i < 5; ++i) ns.emplace_back("n" + std::to_string(i) + ".v" + zone.substr(1, 1) + ".", "");
      return referral(q, zone, ns);
    }
    Response r = reply_to(q);
    if (name == "x.a1.") r.answer.push_back(set(name, wire::kTypeCname, {N("x.a2.")}));
    if (name == "x.a2.") r.answer.push_back(set(name, wire::kTypeCname, {N("x.a3.")}));
    if (name == "x.a3.") r.answer.push_back(set(name, wire::kTypeA, {A("192.0.2.7")}));
    return r;
  };
  const auto lookups = [](const Run& run) {
    std::set<std::string> names;
    for (const std::string& q : run.queries)
      if (q[0] == 'n') names.insert(q.substr(0, q.find(' ')));
    return names.size();
  };
  {
    MemoryDelegations store;
    IterativeResolution r(N("x.a1."), wire::kTypeA, hints(), store, {.max_queries = 200, .max_ns_lookups_total = 100});
    const Run run = drive(r, respond);
    CHECK(run.result.rcode == 0);
    CHECK(lookups(run) == 15);
  }
  MemoryDelegations store;
  IterativeResolution r(N("x.a1."), wire::kTypeA, hints(), store, {.max_queries = 200});
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 2);
  CHECK(lookups(run) == 10);
}

TEST_CASE("root hints: read from zone-file lines with a bad line named by its number", "[recursion]") {
  char path[] = "/tmp/dnsarena-hints-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << "; comment\n.  3600000  NS  A.ROOT.\nA.ROOT. 3600000 A 10.0.0.1\nA.ROOT. 3600000 AAAA ::1\n";
  const Delegation d = read_root_hints(path);
  REQUIRE(d.servers.size() == 1);
  CHECK(d.servers[0].name == N("a.root."));
  CHECK(d.servers[0].addresses.size() == 1);
  std::ofstream(path) << ". NS a.root.\na.root. A 10.0.0.300\n";
  CHECK_THROWS_WITH(read_root_hints(path), Catch::Contains(":2: bad address"));
  std::ofstream(path) << ". NS a.root.\n";
  CHECK_THROWS_WITH(read_root_hints(path), Catch::Contains("no root server with an IPv4 address"));
  std::ofstream(path) << "com. NS a.root.\n";
  CHECK_THROWS_WITH(read_root_hints(path), Catch::Contains(":1: NS not of the root"));
  std::remove(path);
}

TEST_CASE("hostile authoritatives: random referrals and chains and rcodes and silence never break the bounds", "[recursion]") {
  // Names from three labels up to four deep, so referrals go up, down and sideways and
  // chains loop. Each seed is one resolution against replies drawn from that seed.
  const std::vector<std::string> labels{"a", "b", "c"};
  for (unsigned seed = 1; seed <= 3000; ++seed) {
    std::mt19937 rng(seed);
    const auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
    const auto random_name = [&] {
      std::string n;
      for (unsigned i = 0, depth = 1 + pick(4); i < depth; ++i) n += labels[pick(3)] + ".";
      return n;
    };
    const auto respond = [&](const Query& q) -> std::optional<Response> {
      const std::string qname = dnsarena::dnssec::name_text(q.qname);
      switch (pick(9)) {
        case 0: return std::nullopt;
        case 1: return reply_to(q, static_cast<std::uint16_t>(pick(6)), pick(2) == 0);
        case 2: {  // a referral to any zone, glue for any name
          std::vector<std::pair<std::string, std::string>> ns;
          for (unsigned i = 0, n = 1 + pick(20); i < n; ++i)
            ns.emplace_back(random_name(), pick(2) ? "10.0." + std::to_string(pick(4)) + "." + std::to_string(pick(4)) : "");
          return referral(q, pick(2) ? random_name() : qname, ns);
        }
        case 3: {
          Response r = reply_to(q, 0, pick(2) == 0);
          r.answer.push_back(set(qname, wire::kTypeCname, {N(random_name())}));
          if (pick(2)) r.answer.push_back(set(random_name(), wire::kTypeA, {A("192.0.2.1")}));
          return r;
        }
        case 4: {
          Response r = reply_to(q, static_cast<std::uint16_t>(pick(2) * 3));
          r.answer.push_back(set(random_name(), wire::kTypeDname, {N(random_name())}));
          r.answer.push_back(set(qname, wire::kTypeCname, {N(random_name())}));
          return r;
        }
        case 5: return nodata(q);
        case 6: {
          Response r = reply_to(q);
          r.answer.push_back(set(qname, q.qtype, {A("192.0.2.2")}));
          return r;
        }
        case 7: {
          Response r = reply_to(q);
          r.qname = N(random_name());  // another question
          return r;
        }
        default: return reply_to(q, 3, pick(2) == 0);
      }
    };
    MemoryDelegations store;
    Delegation h = hints();
    h.servers[0].addresses.push_back(*ServerAddress::parse("10.0.0.2"));
    IterativeResolution r(N(random_name()), wire::kTypeA, h, store);
    Run run;
    Query q;
    while (r.need(q) == IterativeResolution::Step::query) {
      run.queries.push_back("");
      if (run.queries.size() > 32) break;
      if (const auto reply = respond(q)) r.provide(*reply); else r.provide_failure();
    }
    INFO("seed " << seed);
    REQUIRE(run.queries.size() <= 32);
    REQUIRE(r.queries_sent() <= 32);
    const std::uint16_t rcode = r.result().rcode;
    CHECK((rcode == 0 || rcode == 2 || rcode == 3 || rcode == 6));
    CHECK(r.need(q) == IterativeResolution::Step::done);
  }
}

TEST_CASE("the caller's ranking picks the address asked next and a failed one is not asked again", "[recursion]") {
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;
    const std::string at = q.server.text();
    if (at == "10.0.0.1") return referral(q, "com.", {{"ns1.com.", "10.0.0.2"}, {"ns2.com.", "10.0.0.3"}, {"ns3.com.", "10.0.0.4"}});
    if (at == "10.0.0.3") return std::nullopt;  // the fastest by rank, but silent now
    Response r = reply_to(q);
    r.answer.push_back(set("www.com.", wire::kTypeA, {A("192.0.2.3")}));
    return r;
  };
  MemoryDelegations store;
  IterativeResolution r(N("www.com."), wire::kTypeA, hints(), store);
  // Lower is better: .3, then .4, then .2.
  struct ByHost final : ServerSelection {
    std::uint32_t rank(const ServerAddress& a, std::span<const std::uint8_t>) const override {
      return a.v4[3] == 3 ? 1u : a.v4[3] == 4 ? 2u : 3u;
    }
    void lame(const ServerAddress&, std::span<const std::uint8_t>) override {}
  } by_host;
  r.use_servers(&by_host);
  const Run run = drive(r, respond);
  CHECK(run.result.rcode == 0);
  CHECK(run.queries == std::vector<std::string>{". 2 @10.0.0.1", "com. 1 @10.0.0.1", "www.com. 1 @10.0.0.3",
                                                 "www.com. 1 @10.0.0.4"});
}

TEST_CASE("a server that timed out is asked once more when every other has failed and not a third time",
          "[recursion]") {
  unsigned asked_3 = 0;
  const auto respond = [&](const Query& q) -> std::optional<Response> {
    if (is(q, ".")) return std::nullopt;  // priming: no reply
    const std::string at = q.server.text();
    if (at == "10.0.0.1") return referral(q, "com.", {{"ns1.com.", "10.0.0.2"}, {"ns2.com.", "10.0.0.3"}});
    if (at == "10.0.0.2") return std::nullopt;           // silent
    if (at == "10.0.0.3" && ++asked_3 == 1) return std::nullopt;  // slow: its first reply came too late
    Response r = reply_to(q);
    r.answer.push_back(set("www.com.", wire::kTypeA, {A("192.0.2.3")}));
    return r;
  };
  // Every failure a timeout, as the recursive client reports one.
  auto drive_timeouts = [&](IterativeResolution& r) {
    Run run;
    Query q;
    while (r.need(q) == IterativeResolution::Step::query) {
      run.queries.push_back(dnsarena::dnssec::name_text(q.qname) + " " + std::to_string(q.qtype) + " @" + q.server.text());
      REQUIRE(run.queries.size() < 50);
      if (const auto reply = respond(q)) r.provide(*reply);
      else r.provide_failure(true);
    }
    run.result = r.result();
    return run;
  };
  MemoryDelegations store;
  IterativeResolution r(N("www.com."), wire::kTypeA, hints(), store);
  const Run run = drive_timeouts(r);
  CHECK(run.result.rcode == 0);
  CHECK(run.queries == std::vector<std::string>{". 2 @10.0.0.1", ". 2 @10.0.0.1", "com. 1 @10.0.0.1",
                                                 "www.com. 1 @10.0.0.2", "www.com. 1 @10.0.0.3",
                                                 "www.com. 1 @10.0.0.2", "www.com. 1 @10.0.0.3"});
  // Both silent: each asked twice, then SERVFAIL.
  asked_3 = 1000;
  const auto silent = [&](const Query& q) -> std::optional<Response> {
    if (q.server.text() == "10.0.0.1" && !is(q, ".")) return respond(q);
    return std::nullopt;
  };
  // The com. servers asked, every failure a timeout or none.
  auto com_servers_asked = [&](IterativeResolution& machine, bool timeouts) {
    Query q;
    std::vector<std::string> asked;
    while (machine.need(q) == IterativeResolution::Step::query) {
      REQUIRE(asked.size() < 50);
      if (q.server.text() != "10.0.0.1") asked.push_back(q.server.text());
      if (const auto reply = silent(q)) machine.provide(*reply);
      else machine.provide_failure(timeouts);
    }
    return asked;
  };
  MemoryDelegations store2;
  IterativeResolution dead(N("www.com."), wire::kTypeA, hints(), store2);
  CHECK(com_servers_asked(dead, true) == std::vector<std::string>{"10.0.0.2", "10.0.0.3", "10.0.0.2", "10.0.0.3"});
  CHECK(dead.result().rcode == wire::kRcodeServFail);
  // A failure that is no timeout (a refusal, a reply that does not parse): not asked again.
  MemoryDelegations store3;
  IterativeResolution refused(N("www.com."), wire::kTypeA, hints(), store3);
  CHECK(com_servers_asked(refused, false) == std::vector<std::string>{"10.0.0.2", "10.0.0.3"});
  CHECK(refused.result().rcode == wire::kRcodeServFail);
}

TEST_CASE("a DS question goes to the parent's servers even when the child's cut is known", "[recursion]") {
  MemoryDelegations store;
  IterativeResolution first(N("www.example.com."), wire::kTypeA, hints(), store);
  REQUIRE(drive(first, simple_tree).result.rcode == 0);  // com. and example.com. cuts learned
  const auto respond = [](const Query& q) -> std::optional<Response> {
    if (q.server.text() == "10.0.0.2" && is(q, "example.com.") && q.qtype == wire::kTypeDs) {
      Response r = reply_to(q);
      r.answer.push_back(set("example.com.", wire::kTypeDs, {Bytes{1, 2, 8, 2, 0xab}}));
      return r;
    }
    return simple_tree(q);  // the child would answer NODATA
  };
  IterativeResolution ds(N("example.com."), wire::kTypeDs, hints(), store);
  const Run run = drive(ds, respond);
  CHECK(run.result.rcode == 0);
  CHECK(run.result.answer.size() == 1);
  CHECK(run.queries == std::vector<std::string>{"example.com. 43 @10.0.0.2"});
}

TEST_CASE("denials keep their NSEC and NSEC3 proofs and a wildcard answer its NSEC, with RRSIGs", "[recursion]") {
  const Bytes sig{0, 1, 13, 3};  // RRSIG RDATA as the state machine sees it: opaque bytes
  auto signed_set = [&](const std::string& owner, std::uint16_t type) {
    Rrset s = set(owner, type, {Bytes{1, 2, 3}});
    s.rrsigs.push_back(sig);
    return s;
  };
  // simple_tree, with the leaf's replies carrying proofs as a server asked with DO does.
  auto tree = [&](const Query& q) -> std::optional<Response> {
    std::optional<Response> r = simple_tree(q);
    if (!r || q.server.text() != "10.0.0.3" || is(q, "example.com.")) return r;
    if (is(q, "nx.example.com.")) r->rcode = wire::kRcodeNxDomain;
    r->authority.push_back(signed_set("example.com.", wire::kTypeNsec));
    r->authority.push_back(signed_set("abc.example.com.", wire::kTypeNsec3));
    return r;
  };
  MemoryDelegations store;
  SECTION("NXDOMAIN") {
    IterativeResolution r(N("nx.example.com."), wire::kTypeA, hints(), store);
    const Run run = drive(r, tree);
    CHECK(run.result.rcode == wire::kRcodeNxDomain);
    std::set<std::uint16_t> types;
    for (const Rrset& s : run.result.authority) {
      types.insert(s.type);
      if (s.type != wire::kTypeSoa) CHECK(s.rrsigs == std::vector<Bytes>{sig});
    }
    CHECK(types == std::set<std::uint16_t>{wire::kTypeSoa, wire::kTypeNsec, wire::kTypeNsec3});
  }
  SECTION("an answer (a wildcard's expansion)") {
    IterativeResolution r(N("www.example.com."), wire::kTypeA, hints(), store);
    const Run run = drive(r, tree);
    CHECK(run.result.rcode == 0);
    CHECK(run.result.answer.size() == 1);
    CHECK(run.result.authority.size() == 2);
  }
}

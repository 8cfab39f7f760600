// SPDX-License-Identifier: GPL-3.0-or-later
// The lab hierarchy (bench/lab/dns_hierarchy.hpp) is a working DNS tree: Unbound and
// Knot Resolver, resolving from its root hints, answer every question of kHierarchyNames
// with the rcode the hierarchy promises, through referrals with and without glue, lame,
// silent and slow servers, CNAME chains across zones, a DNAME and an answer only TCP
// carries; the slow server answers what its knotd answers, after its delay.
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "dns/query_builder.hpp"
#include "tests/test_skip.hpp"
#include "tests/workers/serve_harness.hpp"
#include "wire/dns_name.hpp"

#include "bench/lab/dns_hierarchy.hpp"
#include "bench/lab/unbound_process.hpp"
#include "tests/recursion/answer_set.hpp"
#include "tests/recursion/hints_kresd.hpp"
#include "wire/constants.hpp"

using dnsarena::bench::DnsHierarchy;
using dnsarena::bench::kHierarchyNames;

TEST_CASE("Unbound resolves every name of the lab hierarchy from its root hints", "[hierarchy][unbound]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  DnsHierarchy h;
  dnsarena::bench::UnboundProcess unbound({.dir = h.dir(), .tag = "hints", .threads = 1, .root_hints = h.root_hints()});
  for (const auto& n : kHierarchyNames) {
    const dnsarena::test::AnswerSet a = dnsarena::test::ask_resolver(unbound.port(), n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << ": " << a.text());
    CHECK(a.rcode == n.rcode);
  }
  // A few answers checked in full: the chain across three zones, the DNAME and its
  // synthesized CNAME, the 40 TXT records that need TCP to the authoritative.
  const auto chain = dnsarena::test::ask_resolver(unbound.port(), "chain.example.com.", dnsarena::wire::kTypeA);
  CHECK(chain.records.size() == 3);
  const auto dname = dnsarena::test::ask_resolver(unbound.port(), "x.dname.example.com.", dnsarena::wire::kTypeA);
  CHECK(dname.records.size() == 3);
  const auto big = dnsarena::test::ask_resolver(unbound.port(), "big.example.com.", dnsarena::wire::kTypeTxt);
  CHECK(big.records.size() == 40);
  const auto nodata = dnsarena::test::ask_resolver(unbound.port(), "f.example.com.", dnsarena::wire::kTypeA);
  CHECK((nodata.rcode == 0 && nodata.records.empty()));
}

TEST_CASE("Knot Resolver resolves every name of the lab hierarchy from its root hints", "[hierarchy][kresd]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  DnsHierarchy h;
  dnsarena::test::HintsKresd kresd(h);
  for (const auto& n : kHierarchyNames) {
    const dnsarena::test::AnswerSet a = dnsarena::test::ask_resolver(kresd.port(), n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << ": " << a.text());
    CHECK(a.rcode == n.rcode);
  }
}

TEST_CASE("the hierarchy's slow server answers as its knotd does but only after its delay", "[hierarchy]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  DnsHierarchy h;
  const auto name = dnsarena::wire::name_to_wire("www.slow.com.");
  const auto q = dnsarena::dns::build_query({.id = 7, .qname = name, .qtype = dnsarena::wire::kTypeA});
  const std::vector<std::uint8_t> query(q.begin(), q.end());
  const auto t0 = std::chrono::steady_clock::now();
  const dnsarena::test::DnsReply slow = dnsarena::test::udp_exchange_at(h.address(10) + ":53", query);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  const dnsarena::test::DnsReply direct = dnsarena::test::udp_exchange_at(h.address(6) + ":53", query);
  REQUIRE(slow.answered);
  CHECK(slow.wire == direct.wire);
  CHECK(elapsed >= std::chrono::milliseconds(150));
}

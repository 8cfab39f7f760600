// SPDX-License-Identifier: GPL-3.0-or-later
// The state machine over real UDP and TCP (sync_driver.hpp) against the lab hierarchy,
// every answer compared with Unbound's (qname-minimisation on) from the same root hints:
// referrals with and without glue, a lame and a silent server, chains across zones, a
// DNAME, an answer that needs TCP, NXDOMAIN at a leaf and at the root, SERVFAIL.
#include <catch2/catch.hpp>

#include "tests/test_skip.hpp"

#include "bench/lab/dns_hierarchy.hpp"
#include "bench/lab/unbound_process.hpp"
#include "dnssec/rrset.hpp"
#include "recursion/iterative_resolution.hpp"
#include "tests/recursion/answer_set.hpp"
#include "tests/recursion/hints_kresd.hpp"
#include "tests/recursion/sync_driver.hpp"

namespace {

dnsarena::test::AnswerSet answer_set_of(const dnsarena::recursion::Result& r) {
  std::vector<dnsarena::dns::Record> records;
  for (const dnsarena::dnssec::Rrset& s : r.answer)
    for (const auto& rd : s.rdata)
      records.push_back({dnsarena::dnssec::name_text(s.owner), s.type, s.ttl, rd});
  return dnsarena::test::answer_set(r.rcode, records);
}

}  // namespace

TEST_CASE("iterative resolution over UDP and TCP answers every hierarchy name as Unbound and Knot Resolver do", "[hierarchy][unbound]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  dnsarena::bench::UnboundProcess unbound({.dir = h.dir(), .tag = "qmin", .threads = 1, .root_hints = h.root_hints(),
                                           .server_lines = {"qname-minimisation: yes"}});
  dnsarena::test::HintsKresd kresd(h);
  const dnsarena::recursion::Delegation hints = dnsarena::recursion::read_root_hints(h.root_hints());
  dnsarena::recursion::MemoryDelegations store;
  dnsarena::test::DriverCounts counts;
  unsigned queries = 0;
  for (const auto& n : dnsarena::bench::kHierarchyNames) {
    dnsarena::recursion::IterativeResolution r(dnsarena::dnssec::name_from_text(n.name), n.qtype, hints, store);
    const dnsarena::recursion::Result ours = dnsarena::test::resolve_sync(r, counts);
    queries += r.queries_sent();
    const dnsarena::test::AnswerSet theirs = dnsarena::test::ask_resolver(unbound.port(), n.name, n.qtype);
    const dnsarena::test::AnswerSet knot_resolver = dnsarena::test::ask_resolver(kresd.port(), n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << " (" << ours.why << ")\nours:   " << answer_set_of(ours).text()
                << "unbound: " << theirs.text() << "kresd: " << knot_resolver.text());
    CHECK(answer_set_of(ours) == theirs);
    CHECK(answer_set_of(ours) == knot_resolver);
    CHECK(ours.rcode == n.rcode);
  }
  CHECK(counts.tcp >= 1);            // big.example.com
  CHECK(counts.failures >= 1);       // the silent server, asked at most once before the cut is cached
  CHECK(counts.case_mismatches == 0);  // knotd echoes the 0x20 case
  CHECK(store.closest(dnsarena::dnssec::name_from_text("www.outside.com."))->zone ==
        dnsarena::dnssec::name_from_text("outside.com."));
  WARN("queries for " << dnsarena::bench::kHierarchyNames.size() << " names: " << queries << " (" << counts.udp
                      << " UDP, " << counts.tcp << " TCP, " << counts.failures << " failed)");
}

TEST_CASE("a cold fill of the hierarchy's names costs no more authoritative queries than Unbound's", "[hierarchy][unbound]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  dnsarena::bench::DnsHierarchy h;
  const auto& names = dnsarena::bench::kHierarchyNames;
  // Counted at the knotds (mod-stats), the same way for each resolver, one after the other.
  std::uint64_t before = h.authoritative_queries();
  {
    const dnsarena::recursion::Delegation hints = dnsarena::recursion::read_root_hints(h.root_hints());
    dnsarena::recursion::MemoryDelegations store;
    dnsarena::test::DriverCounts counts;
    for (const auto& n : names) {
      dnsarena::recursion::IterativeResolution r(dnsarena::dnssec::name_from_text(n.name), n.qtype, hints, store);
      dnsarena::test::resolve_sync(r, counts);
    }
  }
  const std::uint64_t ours = h.authoritative_queries() - before;
  before = h.authoritative_queries();
  {
    dnsarena::bench::UnboundProcess unbound({.dir = h.dir(), .tag = "count", .threads = 1,
                                             .root_hints = h.root_hints(), .server_lines = {"qname-minimisation: yes"}});
    for (const auto& n : names) dnsarena::test::ask_resolver(unbound.port(), n.name, n.qtype);
  }
  const std::uint64_t unbound = h.authoritative_queries() - before;
  before = h.authoritative_queries();
  {
    dnsarena::test::HintsKresd kresd(h);
    for (const auto& n : names) dnsarena::test::ask_resolver(kresd.port(), n.name, n.qtype);
  }
  const std::uint64_t kresd = h.authoritative_queries() - before;
  WARN("authoritative queries for a cold fill of " << names.size() << " names: state machine " << ours
                                                   << ", Unbound (qname-minimisation) " << unbound << ", kresd " << kresd);
  CHECK(ours > 0);
  CHECK(ours <= unbound);
}

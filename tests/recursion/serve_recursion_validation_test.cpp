// SPDX-License-Identifier: GPL-3.0-or-later
// DNSSEC validation on the recursive path: `dnsarena serve` with recursion and
// dnssec.trust_anchor_file on, against the signed lab hierarchy (bench/lab/dns_hierarchy.hpp
// with HierarchyOptions::signed_zones, keys in hierarchy_signing.hpp), and a validating
// Unbound from the same root hints and the same anchor in the same test. Every name of
// kSignedHierarchyNames is compared on rcode, answer set and AD (secure, insecure, bogus
// names); a bogus name is SERVFAIL with an EDE; a CD query to it gets the data; a
// run-time negative trust anchor over it makes it insecure at the next query.
// Authoritative queries per validated cold fill are reported for both (knotd counters).
// With recursion.local_root holding the signed root zone (RFC 8806), every name is judged
// as without it and no root server is asked.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/test_skip.hpp"

#include "bench/lab/dns_hierarchy.hpp"
#include "bench/lab/unbound_process.hpp"
#include "cache/segment.hpp"
#include "common/child_process.hpp"
#include "common/find_program.hpp"
#include "tests/recursion/answer_set.hpp"
#include "tests/workers/serve_harness.hpp"

namespace {

using dnsarena::bench::DnsHierarchy;
using dnsarena::bench::HierarchyVerdict;
using dnsarena::bench::kSignedHierarchyNames;
using dnsarena::test::DnsReply;

// A query with DO (and CD when asked) over UDP, again over TCP when truncated.
DnsReply ask_dnssec(std::uint16_t port, const std::string& name, std::uint16_t qtype, bool cd = false) {
  static std::uint16_t id = 1;
  std::vector<std::uint8_t> q = dnsarena::test::make_query(++id, name, qtype, 1232, true);
  if (cd) q[3] |= 0x10;
  DnsReply r = dnsarena::test::udp_exchange(port, q, std::chrono::milliseconds(4000));
  if (r.answered && r.tc()) r = dnsarena::test::tcp_exchange(port, q, std::chrono::milliseconds(4000));
  return r;
}

dnsarena::bench::UnboundProcess validating_unbound(const DnsHierarchy& h) {
  return dnsarena::bench::UnboundProcess(
      {.dir = h.dir(), .tag = "validating", .threads = 1, .root_hints = h.root_hints(),
       .server_lines = {"module-config: \"validator iterator\"", "trust-anchor-file: \"" + h.trust_anchor() + "\"",
                        "qname-minimisation: yes", "ede: yes", "val-log-level: 2"}});
}

struct ValidatingServe {
  std::uint16_t port = dnsarena::test::free_port();
  std::string segment = dnsarena::test::unique_segment("recursion-dnssec");
  std::unique_ptr<dnsarena::test::ServeProcess> serve;
  // `recursion_extra`: more keys of the recursion section, indented.
  explicit ValidatingServe(const DnsHierarchy& h, const std::string& recursion_extra = "") {
    const std::string config = dnsarena::test::write_config(
        "recursion:\n  enabled: true\n  root_hints: " + h.root_hints() + "\n" + recursion_extra + "dnssec:\n  trust_anchor_file: " +
        h.trust_anchor() + "\nfailure_cache: {min_s: 60}\n");
    serve = std::make_unique<dnsarena::test::ServeProcess>(
        std::vector<std::string>{"-c", config, "--segment", segment, "--workers", "1", "--max-entries", "10000",
                                 "--arena-bytes", "8M", "--listen", "127.0.0.1:" + std::to_string(port), "--no-metrics"},
        port);
    if (!serve->wait_ready()) throw std::runtime_error("serve did not start: " + serve->log());
  }
  ~ValidatingServe() {
    serve.reset();
    dnsarena::cache::Segment::remove(segment);
  }
};

const char* verdict_text(HierarchyVerdict v) {
  return v == HierarchyVerdict::secure ? "secure" : v == HierarchyVerdict::insecure ? "insecure" : "bogus";
}

}  // namespace

TEST_CASE("the signed lab hierarchy: a validating Unbound finds every name secure, insecure or bogus as listed",
          "[hierarchy][unbound][dnssec]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  DnsHierarchy h({.signed_zones = true});
  const auto unbound = validating_unbound(h);
  for (const auto& n : kSignedHierarchyNames) {
    const DnsReply r = ask_dnssec(unbound.port(), n.name, n.qtype);
    INFO(n.name << " type " << n.qtype << " expected " << verdict_text(n.verdict));
    REQUIRE(r.answered);
    CHECK(r.rcode() == n.rcode);
    CHECK(r.ad() == (n.verdict == HierarchyVerdict::secure));
  }
}

TEST_CASE("serve with recursion and validation judges every signed hierarchy name as a validating Unbound does",
          "[hierarchy][unbound][dnssec][serve]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  REQUIRE(dnsarena::bench::unbound_installed());
  DnsHierarchy h({.signed_zones = true});
  const auto unbound = validating_unbound(h);
  ValidatingServe serve(h);

  // A cold fill of every name by each resolver, authoritative queries counted by the knotds.
  std::uint64_t before = h.authoritative_queries();
  std::uint64_t before_ds = h.authoritative_queries_of_type("DS");
  std::vector<DnsReply> ours;
  for (const auto& n : kSignedHierarchyNames) ours.push_back(ask_dnssec(serve.port, n.name, n.qtype));
  const std::uint64_t serve_queries = h.authoritative_queries() - before;
  const std::uint64_t serve_ds = h.authoritative_queries_of_type("DS") - before_ds;
  before = h.authoritative_queries();
  before_ds = h.authoritative_queries_of_type("DS");
  std::vector<DnsReply> theirs;
  for (const auto& n : kSignedHierarchyNames) theirs.push_back(ask_dnssec(unbound.port(), n.name, n.qtype));
  const std::uint64_t unbound_queries = h.authoritative_queries() - before;
  const std::uint64_t unbound_ds = h.authoritative_queries_of_type("DS") - before_ds;
  WARN("validated cold fill of " << kSignedHierarchyNames.size() << " names: authoritative queries serve "
                                 << serve_queries << " (" << serve_ds << " DS), Unbound " << unbound_queries << " ("
                                 << unbound_ds << " DS)");
  // Every cut below a signed parent was met as a referral, which carried its DS set or the
  // parent's signed proof that it has none (workers/referral_ds.hpp): no DS question is
  // left to ask. Without the DS sets serve asked 53 queries against Unbound's 46, without
  // the proofs 47 (one DS query per unsigned delegation below a signed zone).
  CHECK(serve_ds == 0);
  CHECK(serve_queries <= unbound_queries);

  for (std::size_t i = 0; i < kSignedHierarchyNames.size(); ++i) {
    const auto& n = kSignedHierarchyNames[i];
    INFO(n.name << " type " << n.qtype << " expected " << verdict_text(n.verdict) << "\n" << serve.serve->log());
    REQUIRE(ours[i].answered);
    REQUIRE(theirs[i].answered);
    CHECK(ours[i].rcode() == theirs[i].rcode());
    CHECK(ours[i].ad() == theirs[i].ad());
    CHECK(ours[i].rcode() == n.rcode);
    CHECK(ours[i].ad() == (n.verdict == HierarchyVerdict::secure));
    if (n.verdict == HierarchyVerdict::bogus) {
      CHECK(ours[i].ede >= 0);  // why it failed, as the forwarding path says it
    } else {
      // The data too (from the cache now): the same answer set as Unbound's.
      const auto a = dnsarena::test::ask_resolver(serve.port, n.name, n.qtype);
      const auto b = dnsarena::test::ask_resolver(unbound.port(), n.name, n.qtype);
      INFO("ours:    " << a.text() << "unbound: " << b.text());
      CHECK(a == b);
    }
  }

  // Checking disabled: the bogus name's data, unvalidated, without AD.
  const DnsReply cd = ask_dnssec(serve.port, "www.bogus.com.", 1, true);
  REQUIRE(cd.answered);
  CHECK(cd.rcode() == 0);
  CHECK_FALSE(cd.ad());
  CHECK(cd.count(0, 1) == 1);

  // A run-time negative trust anchor: the bogus name (in the failure cache for 60 s) is
  // resolved and validated again at once, insecure: the data without AD.
  int status = -1;
  const std::string out = dnsarena::test::run_command(
      dnsarena::test::dnsarena_binary() + " dnssec nta add bogus.com --segment " + serve.segment + " 2>&1", &status);
  INFO(out);
  REQUIRE(status == 0);
  const DnsReply insecure = ask_dnssec(serve.port, "www.bogus.com.", 1);
  REQUIRE(insecure.answered);
  CHECK(insecure.rcode() == 0);
  CHECK_FALSE(insecure.ad());
  CHECK(insecure.count(0, 1) == 1);
}

TEST_CASE("with the signed root zone as local root every signed hierarchy name is judged the same, no root asked",
          "[hierarchy][dnssec]") {
  REQUIRE(dnsarena::bench::knotd_installed());
  if (!dnsarena::bench::port53_permitted()) return dnsarena::test::skip_test("the lab hierarchy binds port 53: run as root");
  DnsHierarchy h({.signed_zones = true});
  // The root zone as its knotd signed and serves it ("[.] OWNER TTL CLASS TYPE RDATA" lines).
  const auto knotc = dnsarena::common::find_daemon_program("knotc");
  REQUIRE(knotc);
  int status = 0;
  const std::string read =
      dnsarena::common::run_and_capture({*knotc, "-c", h.dir() + "/knotd-2/knot.conf", "zone-read", "."}, status);
  REQUIRE(status == 0);
  std::string zone;
  std::istringstream lines(read);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("[.] ", 0) == 0) zone += line.substr(4) + "\n";
  REQUIRE(zone.find(" RRSIG ") != std::string::npos);
  const std::string copy = h.dir() + "/signed-root.zone";
  std::ofstream(copy) << zone;

  auto root_queries = [&] { return h.authoritative_queries(2) + h.authoritative_queries(3); };
  std::vector<DnsReply> reference;
  {
    ValidatingServe serve(h);
    for (const auto& n : kSignedHierarchyNames) reference.push_back(ask_dnssec(serve.port, n.name, n.qtype));
  }
  const std::uint64_t roots_before = root_queries();
  {
    ValidatingServe serve(h, "  local_root: " + copy + "\n");
    for (std::size_t i = 0; i < kSignedHierarchyNames.size(); ++i) {
      const auto& n = kSignedHierarchyNames[i];
      const DnsReply ours = ask_dnssec(serve.port, n.name, n.qtype);
      INFO(n.name << " type " << n.qtype << ": local root rcode " << ours.rcode() << " ad " << ours.ad()
                  << "; root servers rcode " << reference[i].rcode() << " ad " << reference[i].ad());
      if (!ours.answered) FAIL("no answer; serve's log:\n" << serve.serve->log());
      CHECK(ours.rcode() == reference[i].rcode());
      CHECK(ours.ad() == reference[i].ad());
      CHECK(ours.count(0, n.qtype) == reference[i].count(0, n.qtype));
      CHECK(ours.rcode() == n.rcode);
    }
  }
  CHECK(root_queries() == roots_before);
}

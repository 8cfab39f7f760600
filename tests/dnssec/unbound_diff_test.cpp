// SPDX-License-Identifier: GPL-3.0-or-later
// Verdicts compared with Unbound's validator on the same zones: Unbound (validator +
// iterator, the same trust anchor file, every zone knotd serves as a stub zone) and our
// Validation (fed by knotd directly, DO + CD) answer the same names; rcode and AD must
// agree for every name, and the EDE too where Unbound sends one (on a zone's first bogus
// name: see below).
//
// Our verdict as a resolver would answer: secure -> upstream rcode with AD, insecure and
// indeterminate -> upstream rcode without AD, bogus -> SERVFAIL with the EDE.
// Left out: names under unsupalg.test. and unsupdigest.test. (their DS sets point to
// zones knotd does not serve, so Unbound's iterator cannot reach them) and under
// deleg.optout.test. (an unsigned delegation to a server that does not exist).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "common/child_process.hpp"
#include "tests/dnssec/chain_runner.hpp"
#include "tests/workers/serve_harness.hpp"

using namespace dnsarena::dnssec;
using namespace dnsarena::dnssec::test;

namespace {

class UnboundValidator {
public:
  UnboundValidator(const SignedZones& zones, const std::string& anchor_file) {
    port_ = dnsarena::test::free_port();
    dir_ = zones.dir() + "/unbound";
    std::filesystem::create_directories(dir_);
    std::ostringstream c;
    c << "server:\n  interface: 127.0.0.1\n  port: " << port_ << "\n  do-ip6: no\n  do-not-query-localhost: no\n"
      << "  username: \"\"\n  chroot: \"\"\n  directory: \"" << dir_ << "\"\n  pidfile: \"" << dir_ << "/unbound.pid\"\n"
      << "  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  num-threads: 1\n  so-reuseport: no\n"
      << "  module-config: \"validator iterator\"\n  trust-anchor-file: \"" << anchor_file << "\"\n"
      << "  ede: yes\n  val-log-level: 2\n  qname-minimisation: no\n  aggressive-nsec: no\n"
      << "  access-control: 127.0.0.0/8 allow\n  minimal-responses: yes\n"
      << "  local-zone: \"test.\" nodefault\n";  // RFC 6761 names are local zones by default
    for (const char* z : {"test.", "rsa.test.", "ed.test.", "n3.test.", "optout.test.", "hiter.test.", "badds.test.",
                          "unsigned.test."})
      c << "stub-zone:\n  name: \"" << z << "\"\n  stub-addr: 127.0.0.1@" << zones.port() << "\n";
    std::ofstream(dir_ + "/unbound.conf") << c.str();
    unbound_ = dnsarena::common::ChildProcess({UNBOUND_PROGRAM, "-d", "-c", dir_ + "/unbound.conf"},
                                             {.log_path = dir_ + "/unbound.log", .truncate_log = true,
                                              .die_with_parent = true});
    // Until it answers (a refused port fails at once: poll until a deadline).
    const auto probe = dnsarena::test::make_query(1, "www.test.", 1, 1232, true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!dnsarena::test::udp_exchange(port_, probe, std::chrono::milliseconds(500)).answered) {
      if (std::chrono::steady_clock::now() > deadline || !unbound_.running())
        throw std::runtime_error("unbound did not start; see " + dir_);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  dnsarena::test::DnsReply ask(const std::string& name, std::uint16_t type) const {
    static std::uint16_t id = 100;
    return dnsarena::test::udp_exchange(port_, dnsarena::test::make_query(++id, name, type, 1232, true),
                                        std::chrono::milliseconds(3000));
  }

private:
  std::uint16_t port_ = 0;
  std::string dir_;
  dnsarena::common::ChildProcess unbound_;
};

struct Name {
  std::string name;
  std::uint16_t type;
};

}  // namespace

TEST_CASE("verdicts agree with Unbound's validator", "[dnssec][unbound]") {
  SignedZones zones;
  TrustAnchors anchors;
  anchors.add_file(zones.anchor_ds_file());
  UnboundValidator unbound(zones, zones.anchor_ds_file());

  constexpr std::uint16_t kA = 1, kTxt = 16, kAaaa = 28;
  std::vector<Name> names{{"www.test.", kA},         {"nope.test.", kA},          {"www.test.", kAaaa},
                          {"a.wild.test.", kA},      {"a.wild.test.", kTxt},      {"www.optout.test.", kA},
                          {"nope.optout.test.", kA}, {"deleg.optout.test.", kTypeDs},
                          {"www.hiter.test.", kA},   {"nope.hiter.test.", kA},    {"www.badds.test.", kA},
                          {"nope.badds.test.", kA},  {"www.unsigned.test.", kA},  {"nope.unsigned.test.", kA},
                          {"unsigned.test.", kTypeDs}, {"rsa.test.", kTypeDs},    {"test.", kTypeDnskey}};
  for (const char* z : {"rsa.test.", "ed.test.", "n3.test."}) {
    for (const char* label : {"www.", "nope.", "a.wild.", "x.y.z.", "wild."})
      for (std::uint16_t t : {kA, kAaaa, kTxt}) names.push_back({std::string(label) + z, t});
  }

  std::size_t agree = 0, ede_compared = 0;
  std::set<std::string> bogus_zones;
  std::ostringstream table;
  for (const Name& n : names) {
    const Response upstream = zones.fetch(n.name, n.type);
    const RunResult ours = run_validation(zones, anchors, upstream);
    const unsigned our_rcode = ours.outcome.verdict == Verdict::bogus ? 2u : upstream.rcode;
    const bool our_ad = ours.outcome.verdict == Verdict::secure;
    const dnsarena::test::DnsReply theirs = unbound.ask(n.name, n.type);
    REQUIRE(theirs.answered);
    table << n.name << " " << n.type << ": ours " << verdict_name(ours.outcome.verdict) << " rcode " << our_rcode
          << " ad " << our_ad << " ede " << static_cast<int>(ours.outcome.ede) << " (" << ours.outcome.why
          << "); unbound rcode " << theirs.rcode() << " ad " << theirs.ad() << " ede " << theirs.ede << "\n";
    INFO(n.name << " type " << n.type << ": ours " << verdict_name(ours.outcome.verdict) << " (" << ours.outcome.why
                << ")");
    CHECK(our_rcode == theirs.rcode());
    CHECK(our_ad == theirs.ad());
    // EDE: on the first bogus name of a zone only. Unbound then keeps the zone's key entry
    // as bogus without its reason, and answers that zone's later names with EDE 6.
    const std::string zone = n.name.substr(n.name.find('.') + 1);
    if (theirs.ede >= 0 && ours.outcome.verdict == Verdict::bogus && bogus_zones.insert(zone).second) {
      ++ede_compared;
      CHECK(static_cast<int>(ours.outcome.ede) == theirs.ede);
    }
    agree += our_rcode == theirs.rcode() && our_ad == theirs.ad();
  }
  INFO("every name:\n" << table.str());
  CHECK(agree == names.size());
  CHECK(ede_compared >= 1);  // badds.test.: DNSKEY Missing (9) on both sides
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Verdicts compared with Unbound's validator on the same zones: Unbound (validator +
// iterator, the same trust anchor file, every zone knotd serves as a stub zone) and our
// Validation (fed by knotd directly, DO + CD) answer the same names; rcode and AD must
// agree for every name, and the EDE too where Unbound sends one (on a zone's first bogus
// name: see below).
//
// Our verdict as a resolver would answer: secure -> upstream rcode with AD, insecure and
// indeterminate -> upstream rcode without AD, bogus -> SERVFAIL with the EDE.
// The names and what is left out: unbound_validator.hpp.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "tests/dnssec/chain_runner.hpp"
#include "tests/dnssec/unbound_validator.hpp"
#include "tests/workers/serve_harness.hpp"

using namespace dnsarena::dnssec;
using namespace dnsarena::dnssec::test;

TEST_CASE("verdicts agree with Unbound's validator", "[dnssec][unbound]") {
  SignedZones zones;
  TrustAnchors anchors;
  anchors.add_file(zones.anchor_ds_file());
  UnboundValidator unbound(zones, zones.anchor_ds_file());

  const std::vector<Name> names = differential_names();

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

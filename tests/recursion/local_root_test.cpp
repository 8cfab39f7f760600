// SPDX-License-Identifier: GPL-3.0-or-later
// workers/local_root.hpp on a small root zone file: the replies a root server gives
// (priming with the roots' addresses, a referral with NS, DS and glue, DS asked of the
// parent, NXDOMAIN and NODATA with the SOA at its negative TTL), fed to the iterative
// state machine as its root server; expiry from the file time and the SOA expire; and
// the files that are refused, each with what is wrong.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "dnssec/rrset.hpp"
#include "recursion/iterative_resolution.hpp"
#include "wire/constants.hpp"
#include "workers/local_root.hpp"

namespace {

using dnsarena::dnssec::name_from_text;
using dnsarena::workers::LocalRoot;
namespace wire = dnsarena::wire;

std::string write_zone(const std::string& text) {
  static int n = 0;
  const std::string path = "/tmp/dnsarena-local-root-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".zone";
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

const std::string kZone =
    ". 86400 IN SOA a.root-servers.net. nstld.verisign-grs.com. 2026120700 1800 900 604800 86400\n"
    ". 518400 IN NS a.root-servers.net.\n"
    "a.root-servers.net. 518400 IN A 198.41.0.4\n"
    "a.root-servers.net. 518400 IN AAAA 2001:503:ba3e::2:30\n"
    "net. 172800 IN NS a.gtld-servers.net.\n"
    "a.gtld-servers.net. 172800 IN A 192.5.6.30\n"
    "com. 172800 IN NS A.GTLD-SERVERS.NET.\n"
    "com. 86400 IN DS 19718 13 2 8ACBB0CD28F41250A80A491389424D341522D946B0DA0C0291F2D3D771D7805A\n";

dnsarena::recursion::Query to_root(const std::string& name, std::uint16_t type) {
  return {name_from_text(name), type, {}, dnsarena::common::Bytes(1, 0)};
}

}  // namespace

TEST_CASE("a local root answers as a root server: priming, referrals with DS and glue, DS, NXDOMAIN, NODATA",
          "[recursion]") {
  const auto root = LocalRoot::load(write_zone(kZone));
  CHECK(root->serial() == 2026120700);
  const std::int64_t now = std::time(nullptr);

  const auto priming = root->answer(to_root(".", wire::kTypeNs), now);
  REQUIRE(priming);
  CHECK(priming->aa);
  REQUIRE(priming->answer.size() == 1);
  CHECK(priming->answer[0].ttl == 518400);
  REQUIRE(priming->additional.size() == 2);  // A and AAAA of a.root-servers.net
  CHECK(priming->additional[0].owner == name_from_text("a.root-servers.net."));

  const auto referral = root->answer(to_root("www.example.com.", wire::kTypeA), now);
  REQUIRE(referral);
  CHECK_FALSE(referral->aa);
  CHECK(referral->rcode == 0);
  CHECK(referral->answer.empty());
  REQUIRE(referral->authority.size() == 2);
  CHECK(referral->authority[0].type == wire::kTypeNs);
  CHECK(referral->authority[0].rdata[0] == name_from_text("a.gtld-servers.net."));  // lowercased
  CHECK(referral->authority[1].type == wire::kTypeDs);
  REQUIRE(referral->additional.size() == 1);
  CHECK(referral->additional[0].owner == name_from_text("a.gtld-servers.net."));
  // Glue below net. is glue: a question for it is a referral to net.
  const auto glue = root->answer(to_root("a.root-servers.net.", wire::kTypeA), now);
  REQUIRE(glue);
  CHECK_FALSE(glue->aa);
  CHECK(glue->authority[0].owner == name_from_text("net."));

  const auto ds = root->answer(to_root("com.", wire::kTypeDs), now);
  REQUIRE(ds);
  CHECK(ds->aa);
  REQUIRE(ds->answer.size() == 1);
  CHECK(ds->answer[0].type == wire::kTypeDs);
  const auto no_ds = root->answer(to_root("net.", wire::kTypeDs), now);
  REQUIRE(no_ds);
  CHECK(no_ds->aa);
  CHECK(no_ds->answer.empty());
  CHECK(no_ds->authority.at(0).type == wire::kTypeSoa);

  const auto nx = root->answer(to_root("www.nosuchtld.", wire::kTypeA), now);
  REQUIRE(nx);
  CHECK(nx->aa);
  CHECK(nx->rcode == wire::kRcodeNxDomain);
  REQUIRE(nx->authority.size() == 1);
  CHECK(nx->authority[0].type == wire::kTypeSoa);
  CHECK(nx->authority[0].ttl == 86400);  // min(SOA TTL, minimum)
  const auto nodata = root->answer(to_root(".", wire::kTypeMx), now);
  REQUIRE(nodata);
  CHECK(nodata->rcode == 0);
  CHECK(nodata->answer.empty());
  CHECK(nodata->authority.at(0).type == wire::kTypeSoa);

  // Another zone's query is not the root's.
  CHECK_FALSE(root->answer({name_from_text("www.example.com."), wire::kTypeA, {}, name_from_text("com.")}, now));
}

TEST_CASE("the iterative state machine primes and descends from a local root without a root query", "[recursion]") {
  const auto root = LocalRoot::load(write_zone(kZone));
  dnsarena::recursion::Delegation hints;
  hints.zone = dnsarena::common::Bytes(1, 0);
  hints.servers.push_back({name_from_text("a.root-servers.net."), {*dnsarena::recursion::ServerAddress::parse("198.41.0.4")}});
  dnsarena::recursion::MemoryDelegations store;
  dnsarena::recursion::IterativeResolution r(name_from_text("www.example.com."), wire::kTypeA, hints, store);
  dnsarena::recursion::Query q;
  unsigned local = 0;
  for (;;) {
    REQUIRE(r.need(q) == dnsarena::recursion::IterativeResolution::Step::query);
    const auto reply = root->answer(q, std::time(nullptr));
    if (!reply) break;
    r.provide(*reply);
    ++local;
  }
  CHECK(local == 2);  // the priming, then the referral to com.
  CHECK(q.zone == name_from_text("com."));
  CHECK(q.server.text() == "192.5.6.30");
}

TEST_CASE("a local root past its SOA expire (from the file time) is not used", "[recursion]") {
  const std::string path = write_zone(kZone);
  const auto fresh = LocalRoot::load(path);
  const std::int64_t now = std::time(nullptr);
  CHECK(fresh->expires_at() >= now + 604800 - 60);
  CHECK(fresh->answer(to_root("com.", wire::kTypeNs), now));
  CHECK_FALSE(fresh->answer(to_root("com.", wire::kTypeNs), fresh->expires_at()));
  // A file written eight days ago has expired (SOA expire: 7 days).
  const timespec old[2] = {{now - 8 * 86400, 0}, {now - 8 * 86400, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), old, 0) == 0);
  const auto stale = LocalRoot::load(path);
  CHECK_FALSE(stale->answer(to_root("com.", wire::kTypeNs), now));
}

TEST_CASE("a root zone file that does not parse, has no SOA or no NS at the root is refused", "[recursion]") {
  CHECK_THROWS_WITH(LocalRoot::load("/nonexistent/root.zone"), Catch::Contains("/nonexistent/root.zone"));
  const std::string garbage = write_zone(". 86400 IN SOA a.root-servers.net. x. 1 2 3 4 5\n. 86400 IN NS\n");
  CHECK_THROWS_WITH(LocalRoot::load(garbage), Catch::Contains(garbage + ":2"));
  CHECK_THROWS_WITH(LocalRoot::load(write_zone(". 518400 IN NS a.root-servers.net.\n")),
                    Catch::Contains("no SOA record at the root"));
  CHECK_THROWS_WITH(LocalRoot::load(write_zone("com. 86400 IN SOA a.gtld-servers.net. x. 1 2 3 4 5\n"
                                               "com. 86400 IN NS a.gtld-servers.net.\n")),
                    Catch::Contains("no SOA record at the root"));
  CHECK_THROWS_WITH(LocalRoot::load(write_zone(". 86400 IN SOA a.root-servers.net. x. 1 2 3 4 5\n")),
                    Catch::Contains("no NS record at the root"));
}

TEST_CASE("a signed local root gives the NSEC proofs of its denials and unsigned delegations", "[recursion]") {
  const auto root = LocalRoot::load(write_zone(kZone + ". 86400 IN NSEC com. NS SOA RRSIG NSEC DNSKEY\n"
                                                       "com. 86400 IN NSEC net. NS DS RRSIG NSEC\n"
                                                       "net. 86400 IN NSEC . NS RRSIG NSEC\n"));
  const std::int64_t now = std::time(nullptr);
  auto nsec_owners = [](const std::vector<dnsarena::dnssec::Rrset>& section) {
    std::vector<std::string> out;
    for (const auto& s : section)
      if (s.type == dnsarena::dnssec::kTypeNsec) out.push_back(dnsarena::dnssec::name_text(s.owner));
    return out;
  };
  // NXDOMAIN: net. covers nosuchtld., "." covers the wildcard *. at the closest encloser.
  const auto nx = root->answer(to_root("www.nosuchtld.", wire::kTypeA), now);
  REQUIRE(nx);
  CHECK(nx->rcode == wire::kRcodeNxDomain);
  CHECK(nsec_owners(nx->authority) == std::vector<std::string>{"net.", "."});
  // A referral to a delegation without DS proves it by the NSEC at the cut; one with DS does not.
  const auto unsigned_referral = root->answer(to_root("www.example.net.", wire::kTypeA), now);
  REQUIRE(unsigned_referral);
  CHECK(nsec_owners(unsigned_referral->authority) == std::vector<std::string>{"net."});
  const auto signed_referral = root->answer(to_root("www.example.com.", wire::kTypeA), now);
  REQUIRE(signed_referral);
  CHECK(nsec_owners(signed_referral->authority).empty());
  const auto no_ds = root->answer(to_root("net.", wire::kTypeDs), now);
  REQUIRE(no_ds);
  CHECK(nsec_owners(no_ds->authority) == std::vector<std::string>{"net."});
  // NODATA at the apex: the apex's NSEC.
  const auto nodata = root->answer(to_root(".", wire::kTypeMx), now);
  REQUIRE(nodata);
  CHECK(nsec_owners(nodata->authority) == std::vector<std::string>{"."});
  // An unsigned copy adds none.
  const auto plain = LocalRoot::load(write_zone(kZone))->answer(to_root("www.nosuchtld.", wire::kTypeA), now);
  REQUIRE(plain);
  CHECK(nsec_owners(plain->authority).empty());
}

namespace {

// kZone as knotd 3.2.6 serves it with zonemd-generate: zonemd-sha384 (taken by AXFR with
// kdig): the digest is knotd's, not ours.
const std::string kKnotZonemdZone =
    ".                   	86400	IN	SOA	a.root-servers.net. nstld.verisign-grs.com. 2026120701 1800 900 604800 86400\n"
    ".                   	518400	IN	NS	a.root-servers.net.\n"
    ".                   	86400	IN	ZONEMD	2026120701 1 1 "
    "DEDD70DC579F00CAEDDFCEF3A6B80EC733F8EBC1B0B1DEF40A0A6C807282750B5A553D42A364EDB1EA2F3C6E11710583\n"
    "com.                	172800	IN	NS	a.gtld-servers.net.\n"
    "com.                	86400	IN	DS	19718 13 2 "
    "8ACBB0CD28F41250A80A491389424D341522D946B0DA0C0291F2D3D771D7805A\n"
    "net.                	172800	IN	NS	a.gtld-servers.net.\n"
    "a.gtld-servers.net. 	172800	IN	A	192.5.6.30\n"
    "a.root-servers.net. 	518400	IN	A	198.41.0.4\n"
    "a.root-servers.net. 	518400	IN	AAAA	2001:503:ba3e::2:30\n"
    ".                   	86400	IN	SOA	a.root-servers.net. nstld.verisign-grs.com. 2026120701 1800 900 604800 86400\n";

std::string with_glue(const std::string& address) {
  std::string text = kKnotZonemdZone;
  text.replace(text.find("192.5.6.30"), 10, address);
  return text;
}

}  // namespace

TEST_CASE("a local root's ZONEMD is verified at load: a match loads, a changed glue address is refused",
          "[recursion][zonemd]") {
  using dnsarena::dnssec::ZonemdStatus;
  using dnsarena::workers::ZonemdCheck;
  const auto root = LocalRoot::load(write_zone(kKnotZonemdZone));
  CHECK(root->zonemd().status == ZonemdStatus::verified);
  CHECK_THAT(root->zonemd().summary(), Catch::Contains("ZONEMD verified (SHA-384 digest dedd70dc"));

  const std::string tampered = write_zone(with_glue("192.5.6.31"));
  CHECK_THROWS_WITH(LocalRoot::load(tampered),
                    Catch::Contains(tampered + ": ZONEMD does not verify") &&
                        Catch::Contains("the record says dedd70dc579f00ca") && Catch::Contains("the zone's SHA-384 digest is"));
  CHECK_THROWS_WITH(LocalRoot::load(tampered, ZonemdCheck::require), Catch::Contains("ZONEMD does not verify"));
  // off: not checked, the tampered copy loads.
  const auto unchecked = LocalRoot::load(tampered, ZonemdCheck::off);
  CHECK_THAT(unchecked->zonemd().summary(), Catch::Contains("not checked"));
}

TEST_CASE("a local root without ZONEMD loads under verify, saying so, and is refused under require",
          "[recursion][zonemd]") {
  using dnsarena::dnssec::ZonemdStatus;
  using dnsarena::workers::ZonemdCheck;
  const std::string path = write_zone(kZone);
  const auto root = LocalRoot::load(path);
  CHECK(root->zonemd().status == ZonemdStatus::absent);
  CHECK_THAT(root->zonemd().summary(), Catch::Contains("not verified: the copy has none"));
  CHECK_THROWS_WITH(LocalRoot::load(path, ZonemdCheck::require), Catch::Contains(path + ": no ZONEMD record at the root"));
  // Only an algorithm not known here: as if absent under verify, refused under require.
  const std::string unknown = write_zone(kZone + ". 86400 IN ZONEMD 2026120700 1 240 e2d523f654b9422a96c5a8f44607bbee\n");
  CHECK(LocalRoot::load(unknown)->zonemd().status == ZonemdStatus::unsupported);
  CHECK_THROWS_WITH(LocalRoot::load(unknown, ZonemdCheck::require), Catch::Contains("no ZONEMD record that can be checked"));
  // A serial that is not the SOA's does not verify.
  std::string stale = kKnotZonemdZone;
  stale.replace(stale.find("ZONEMD	2026120701"), 17, "ZONEMD	2026120700");
  CHECK_THROWS_WITH(LocalRoot::load(write_zone(stale)), Catch::Contains("is not the SOA serial 2026120701"));
}

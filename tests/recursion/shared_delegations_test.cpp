// SPDX-License-Identifier: GPL-3.0-or-later
// workers/shared_delegations.hpp on a real (tiny) segment: a cut learned through one
// Cache is found through another (two workers), with its glue; the deepest cut wins;
// an entry under (zone, NS) without the zone's NS set is no cut; a client's answer to
// "zone NS" serves as one; root_known() says what closest(".") would. And recursion/result_message.hpp read back.
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "cache/cache.hpp"
#include "dnssec/rrset.hpp"
#include "recursion/result_message.hpp"
#include "tests/cache/test_segment.hpp"
#include "wire/dns_name.hpp"
#include "workers/shared_delegations.hpp"

namespace {

using dnsarena::dnssec::name_from_text;
using dnsarena::recursion::Delegation;
using dnsarena::recursion::ServerAddress;

Delegation example_cut() {
  Delegation d;
  d.zone = name_from_text("example.com.");
  d.ttl = 3600;
  d.servers.push_back({name_from_text("ns1.example.com."), {*ServerAddress::parse("192.0.2.1")}});
  d.servers.push_back({name_from_text("ns.hoster.org."), {}});  // glueless
  return d;
}

// An RRset of one record.
dnsarena::dnssec::Rrset one_record(const std::string& owner, std::uint16_t type, std::uint32_t ttl,
                                   dnsarena::common::Bytes rdata) {
  dnsarena::dnssec::Rrset s;
  s.owner = name_from_text(owner);
  s.type = type;
  s.ttl = ttl;
  s.rdata.push_back(std::move(rdata));
  return s;
}

}  // namespace

TEST_CASE("a zone cut learned by one worker is found by another, deepest first, with its glue", "[recursion]") {
  dnsarena::test::TestSegment seg(dnsarena::test::tiny_geometry(1000, 64 << 10, 8), "cuts");
  dnsarena::cache::Cache one(seg.seg), two(seg.seg);
  dnsarena::workers::SharedDelegations learner(one, 86400), reader(two, 86400);
  CHECK_FALSE(reader.closest(name_from_text("www.example.com.")));
  CHECK_FALSE(reader.root_known());
  learner.learn(example_cut());
  CHECK_FALSE(reader.root_known());  // a deeper cut is no root
  Delegation root;
  root.zone = name_from_text(".");
  root.ttl = 518400;
  root.servers.push_back({name_from_text("a.root-servers.net."), {*ServerAddress::parse("198.41.0.4")}});
  learner.learn(root);
  CHECK(reader.root_known());
  const auto found = reader.closest(name_from_text("a.b.www.example.com."));
  REQUIRE(found);
  CHECK(found->zone == name_from_text("example.com."));
  REQUIRE(found->servers.size() == 2);
  CHECK(found->servers[0].name == name_from_text("ns1.example.com."));
  REQUIRE(found->servers[0].addresses.size() == 1);
  CHECK(found->servers[0].addresses[0] == *ServerAddress::parse("192.0.2.1"));
  CHECK(found->servers[1].addresses.empty());
  CHECK(found->ttl > 3500);
  CHECK(found->ttl <= 3600);
  const auto other = reader.closest(name_from_text("www.example.org."));
  REQUIRE(other);
  CHECK(other->zone == name_from_text("."));
}

TEST_CASE("an NS entry without the zone's own NS set is no cut but a client's NS answer is one", "[recursion]") {
  dnsarena::test::TestSegment seg(dnsarena::test::tiny_geometry(1000, 64 << 10, 8), "nocut");
  dnsarena::cache::Cache cache(seg.seg);
  dnsarena::workers::SharedDelegations store(cache, 86400);
  const std::uint32_t now = dnsarena::cache::wall_clock_now();
  const auto zone = name_from_text("nodata.example.");
  const auto soa_owner = name_from_text("example.");
  const std::uint8_t soa_rdata[22] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  dnsarena::cache::RecordData soa{soa_owner, 6, 1, 300, soa_rdata};
  dnsarena::cache::Answer nodata;
  nodata.ttl = 300;
  nodata.sections[dnsarena::cache::kAuthority] = {&soa, 1};
  REQUIRE(cache.insert(dnsarena::cache::CacheKey(zone, 2), nodata, now) == dnsarena::cache::InsertStatus::inserted);
  CHECK_FALSE(store.closest(name_from_text("www.nodata.example.")));
  // The same at the root: a negative answer under (., NS) is no priming.
  dnsarena::cache::Answer root_nodata = nodata;
  REQUIRE(cache.insert(dnsarena::cache::CacheKey(name_from_text("."), 2), root_nodata, now) ==
          dnsarena::cache::InsertStatus::inserted);
  CHECK_FALSE(store.root_known());
  CHECK_FALSE(store.closest(name_from_text(".")));

  // The child's own answer to "answered.example. NS", name servers in mixed case.
  const auto apex = name_from_text("answered.example.");
  const auto ns_name = dnsarena::wire::name_to_wire("NS1.Answered.Example.");  // case kept
  const std::uint8_t address[4] = {192, 0, 2, 9};
  const dnsarena::cache::RecordData answer_rr[] = {{{}, 2, 1, 600, ns_name}};
  const dnsarena::cache::RecordData glue[] = {{ns_name, 1, 1, 600, address}};
  dnsarena::cache::Answer ns_answer;
  ns_answer.ttl = 600;
  ns_answer.sections[dnsarena::cache::kAnswer] = answer_rr;
  ns_answer.sections[dnsarena::cache::kAdditional] = glue;
  REQUIRE(cache.insert(dnsarena::cache::CacheKey(apex, 2), ns_answer, now) == dnsarena::cache::InsertStatus::inserted);
  const auto cut = store.closest(name_from_text("www.answered.example."));
  REQUIRE(cut);
  REQUIRE(cut->servers.size() == 1);
  CHECK(cut->servers[0].name == name_from_text("ns1.answered.example."));
  REQUIRE(cut->servers[0].addresses.size() == 1);
  CHECK(cut->servers[0].addresses[0] == *ServerAddress::parse("192.0.2.9"));
}

TEST_CASE("a resolution's result as a response message", "[recursion]") {
  dnsarena::recursion::Result r;
  r.rcode = 3;
  dnsarena::common::Bytes rdata(22, 1);
  rdata[0] = rdata[1] = 0;  // MNAME and RNAME: the root
  r.authority.push_back(one_record("example.", 6, 300, rdata));
  const auto qname = name_from_text("nx.example.");
  const auto msg = dnsarena::recursion::result_message(qname, 1, r);
  dnsarena::dnssec::Response parsed;
  std::string error;
  REQUIRE(dnsarena::dnssec::parse_response(msg, parsed, error));
  CHECK(parsed.rcode == 3);
  CHECK(parsed.qname == qname);
  CHECK(parsed.qtype == 1);
  CHECK(parsed.answer.empty());
  REQUIRE(parsed.authority.size() == 1);
  CHECK(parsed.authority[0].type == 6);
  CHECK(parsed.authority[0].ttl == 300);
}

TEST_CASE("a result's RRSIGs follow each set's records, in the answer and the authority section", "[recursion]") {
  using dnsarena::common::Bytes;
  const Bytes zone = name_from_text("example.");
  // RRSIG RDATA covering `type`: algorithm 13, the labels, TTLs and times, key tag, signer, a signature.
  auto rrsig = [&](std::uint16_t type) {
    Bytes sig = {static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type), 13, 2, 0, 0, 14, 16};
    sig.append(10, 7);  // expiration, inception, key tag
    sig += zone;
    sig.append(64, 0x5a);
    return sig;
  };
  dnsarena::recursion::Result r;
  r.rcode = 0;
  dnsarena::dnssec::Rrset a = one_record("www.example.", 1, 3600, Bytes{192, 0, 2, 1});
  a.rrsigs.push_back(rrsig(1));
  r.answer.push_back(a);
  Bytes next = name_from_text("x.example.");
  next += Bytes{0, 1, 0x40};  // type bitmap: A
  dnsarena::dnssec::Rrset nsec = one_record("v.example.", 47, 300, next);  // a wildcard answer's proof
  nsec.rrsigs.push_back(rrsig(47));
  r.authority.push_back(nsec);
  const auto msg = dnsarena::recursion::result_message(a.owner, 1, r);
  dnsarena::dnssec::Response parsed;
  std::string error;
  INFO(error);
  REQUIRE(dnsarena::dnssec::parse_response(msg, parsed, error));
  REQUIRE(parsed.answer.size() == 1);
  CHECK(parsed.answer[0].rdata == a.rdata);
  CHECK(parsed.answer[0].rrsigs == a.rrsigs);
  REQUIRE(parsed.authority.size() == 1);
  CHECK(parsed.authority[0].type == 47);
  CHECK(parsed.authority[0].rrsigs == nsec.rrsigs);
}

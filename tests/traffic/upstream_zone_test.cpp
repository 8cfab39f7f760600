// SPDX-License-Identifier: GPL-3.0-or-later
// The upstream's answers built in-process (no sockets): every kind of answer, ECS, TC.
#include <catch2/catch.hpp>

#include <functional>
#include <set>

#include "dns/query_builder.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "wire/address_prefix.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena::sim;
using namespace dnsarena::sim::traffic;
namespace dns = dnsarena::dns;
namespace wire = dnsarena::wire;
using dnsarena::cache::EcsFamily;

namespace {

struct Fixture {
  TrafficProfile profile = [] {
    TrafficProfile p = default_traffic_profile();
    p.names = 3000;
    return p;
  }();
  UpstreamZone zone{profile, 42, "Zone."};

  // First index whose entry satisfies `pred`.
  std::uint64_t find(const std::function<bool(const GeneratedEntry&)>& pred) const {
    for (std::uint64_t i = 0; i < zone.size(); ++i)
      if (pred(zone.entry(i))) return i;
    FAIL("no entry with the wanted trait among " << zone.size());
    return 0;
  }
  static bool plain(const GeneratedEntry& e) {
    return !e.negative && e.cname_target.empty() && e.ecs.family == EcsFamily::none;
  }

  dns::Message ask(const Bytes& qname, std::uint16_t qtype, bool edns = true, const dns::EcsOption& ecs = {},
              bool udp = true) const {
    return ask_of(zone, qname, qtype, edns, ecs, udp);
  }
  static dns::Message ask_of(const UpstreamZone& z, const Bytes& qname, std::uint16_t qtype, bool edns = true,
                             const dns::EcsOption& ecs = {}, bool udp = true) {
    const Bytes q = dns::build_query({.id = 0x1234, .qname = qname, .qtype = qtype, .edns = edns, .ecs = ecs});
    dns::Message query;
    REQUIRE(dns::parse_message(q, query) == dns::ParseStatus::ok);
    Bytes wire;
    z.respond(query, udp, wire);
    dns::Message r;
    REQUIRE(dns::parse_message(wire, r, true) == dns::ParseStatus::ok);
    CHECK(r.id == 0x1234);
    CHECK(r.qr);
    CHECK(r.aa);
    CHECK(r.qtype == qtype);
    return r;
  }
};

dns::EcsOption v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint8_t source = 24) {
  dns::EcsOption e;
  e.present = true;
  e.family = 1;
  e.source_prefix = source;
  e.address = {a, b, c, d};
  wire::clear_bits_past_prefix(e.address, source);
  return e;
}

std::vector<Bytes> rdatas_of(const dns::Message& m, std::uint16_t type) {
  std::vector<Bytes> out;
  for (const auto& r : m.answer)
    if (r.type == type) out.push_back(r.rdata);
  return out;
}

}  // namespace

TEST_CASE_METHOD(Fixture, "every generated name is found again, names are unique and match upstream_name",
                 "[traffic][zone]") {
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < zone.size(); ++i) {
    const std::string text = zone.name_text(i);
    CHECK(text == upstream_name(profile, 42, i, "zone."));
    names.insert(text);
    Bytes rel = zone.entry(i).qname;
    CHECK(zone.find_relative(rel) == i);
  }
  CHECK(names.size() == zone.size());
  CHECK_FALSE(zone.find_relative(Bytes{3, 'n', 'o', 'p', 0}).has_value());
  CHECK(upstream_name(profile, 42, 0) != upstream_name(profile, 43, 0));
}

TEST_CASE_METHOD(Fixture, "A, AAAA and TXT names answer their records with the entry's TTL", "[traffic][zone]") {
  for (std::uint16_t type : {wire::kTypeA, wire::kTypeAaaa, wire::kTypeTxt}) {
    const std::uint64_t i = find([&](const GeneratedEntry& e) { return plain(e) && e.qtype == type; });
    const GeneratedEntry e = zone.entry(i);
    const dns::Message r = ask(zone.name_wire(i), type);
    CHECK(r.rcode == wire::kRcodeNoError);
    REQUIRE(r.answer.size() == e.rdatas.size());
    for (std::size_t k = 0; k < e.rdatas.size(); ++k) {
      CHECK(r.answer[k].type == type);
      CHECK(r.answer[k].ttl == e.ttl);
      CHECK(r.answer[k].rdata == e.rdatas[k]);
      CHECK(r.answer[k].owner == zone.name_text(i));
    }
    CHECK(r.authority.empty());
  }
}

TEST_CASE_METHOD(Fixture, "another type of a name is NODATA with the SOA", "[traffic][zone]") {
  const std::uint64_t i = find([](const GeneratedEntry& e) { return plain(e) && e.qtype == wire::kTypeA; });
  const dns::Message r = ask(zone.name_wire(i), wire::kTypeAaaa);
  CHECK(r.rcode == wire::kRcodeNoError);
  CHECK(r.answer.empty());
  REQUIRE(r.authority.size() == 1);
  CHECK(r.authority[0].type == wire::kTypeSoa);
  CHECK(r.authority[0].owner == "zone.");
}

TEST_CASE_METHOD(Fixture, "names outside the list are NXDOMAIN, outside the zone REFUSED", "[traffic][zone]") {
  const dns::Message r = ask(wire::name_to_wire("nx1.zone."), wire::kTypeA);
  CHECK(r.rcode == wire::kRcodeNxDomain);
  REQUIRE(r.authority.size() == 1);
  CHECK(r.authority[0].type == wire::kTypeSoa);
  CHECK(r.authority[0].ttl == profile.negative_ttl);
  CHECK(ask(wire::name_to_wire("www.example.com."), wire::kTypeA).rcode == wire::kRcodeRefused);
  CHECK(ask(wire::name_to_wire("xzone."), wire::kTypeA).rcode == wire::kRcodeRefused);
  const dns::Message apex = ask(wire::name_to_wire("zone."), wire::kTypeSoa);
  CHECK(apex.rcode == wire::kRcodeNoError);
  REQUIRE(apex.answer.size() == 1);
  CHECK(apex.answer[0].type == wire::kTypeSoa);
}

TEST_CASE_METHOD(Fixture, "negative names: NXDOMAIN or NODATA for every type", "[traffic][zone]") {
  const std::uint64_t nx = find([](const GeneratedEntry& e) { return e.negative && e.rcode == 3; });
  const std::uint64_t nd = find([](const GeneratedEntry& e) { return e.negative && e.rcode == 0; });
  for (std::uint16_t type : {wire::kTypeA, wire::kTypeAaaa, wire::kTypeTxt}) {
    const dns::Message a = ask(zone.name_wire(nx), type);
    CHECK(a.rcode == wire::kRcodeNxDomain);
    CHECK(a.answer.empty());
    REQUIRE(a.authority.size() == 1);
    CHECK(a.authority[0].ttl == zone.entry(nx).ttl);
    const dns::Message b = ask(zone.name_wire(nd), type);
    CHECK(b.rcode == wire::kRcodeNoError);
    CHECK(b.answer.empty());
    CHECK(b.authority.size() == 1);
  }
}

TEST_CASE_METHOD(Fixture, "CNAME names: name CNAME cdn.name, then the records of cdn.name", "[traffic][zone]") {
  const std::uint64_t i = find([](const GeneratedEntry& e) {
    return !e.negative && !e.cname_target.empty() && e.ecs.family == EcsFamily::none;
  });
  const GeneratedEntry e = zone.entry(i);
  const std::string name = zone.name_text(i);
  const dns::Message r = ask(zone.name_wire(i), e.qtype);
  CHECK(r.rcode == wire::kRcodeNoError);
  REQUIRE(r.answer.size() == 1 + e.rdatas.size());
  CHECK(r.answer[0].type == wire::kTypeCname);
  CHECK(r.answer[0].owner == name);
  CHECK(wire::wire_to_text(r.answer[0].rdata) == "cdn." + name);
  for (std::size_t k = 0; k < e.rdatas.size(); ++k) {
    CHECK(r.answer[1 + k].owner == "cdn." + name);
    CHECK(r.answer[1 + k].rdata == e.rdatas[k]);
  }
  // The target answers by itself; the CNAME type alone gives just the CNAME.
  const dns::Message t = ask(wire::name_to_wire("cdn." + name), e.qtype);
  CHECK(rdatas_of(t, e.qtype) == e.rdatas);
  CHECK(ask(zone.name_wire(i), wire::kTypeCname).answer.size() == 1);
  // Another type: the CNAME and NODATA for the target.
  const std::uint16_t other = e.qtype == wire::kTypeA ? wire::kTypeAaaa : wire::kTypeA;
  const dns::Message o = ask(zone.name_wire(i), other);
  CHECK(o.rcode == wire::kRcodeNoError);
  CHECK(o.answer.size() == 1);
  CHECK(o.authority.size() == 1);
  // cdn. in front of a name without a CNAME does not exist.
  const std::uint64_t p = find(plain);
  CHECK(ask(wire::name_to_wire("cdn." + zone.name_text(p)), wire::kTypeA).rcode == wire::kRcodeNxDomain);
}

TEST_CASE_METHOD(Fixture, "ECS: answers per client /24 with scope 24 and scope 0 elsewhere", "[traffic][zone][ecs]") {
  const std::uint64_t i = find([](const GeneratedEntry& e) {
    return !e.negative && e.cname_target.empty() && e.ecs.family != EcsFamily::none;
  });
  const GeneratedEntry e = zone.entry(i);
  const Bytes name = zone.name_wire(i);
  const dns::Message a = ask(name, e.qtype, true, v4(10, 0, 1, 0));
  const dns::Message a2 = ask(name, e.qtype, true, v4(10, 0, 1, 77, 32));  // same /24, a host address
  const dns::Message b = ask(name, e.qtype, true, v4(10, 0, 2, 0));
  REQUIRE(a.ecs.present);
  CHECK(a.ecs.scope_prefix == 24);
  CHECK(a.ecs.source_prefix == 24);
  CHECK(a2.ecs.scope_prefix == 24);
  CHECK(a2.ecs.source_prefix == 32);  // the client's source is echoed
  CHECK(b.ecs.scope_prefix == 24);
  CHECK(rdatas_of(a, e.qtype).size() == e.rdatas.size());
  CHECK(rdatas_of(a, e.qtype) == rdatas_of(a2, e.qtype));
  CHECK(rdatas_of(a, e.qtype) != rdatas_of(b, e.qtype));
  CHECK(rdatas_of(a, e.qtype) != e.rdatas);
  // Without ECS: the base records and no option.
  const dns::Message n = ask(name, e.qtype, true);
  CHECK_FALSE(n.ecs.present);
  CHECK(rdatas_of(n, e.qtype) == e.rdatas);
  // A name that does not depend on the subnet: scope 0, same records for everyone.
  const std::uint64_t p = find([](const GeneratedEntry& x) { return plain(x) && x.qtype == wire::kTypeA; });
  const dns::Message pa = ask(zone.name_wire(p), wire::kTypeA, true, v4(10, 0, 1, 0));
  const dns::Message pb = ask(zone.name_wire(p), wire::kTypeA, true, v4(10, 0, 2, 0));
  REQUIRE(pa.ecs.present);
  CHECK(pa.ecs.scope_prefix == 0);
  CHECK(rdatas_of(pa, wire::kTypeA) == rdatas_of(pb, wire::kTypeA));
  // Source prefix 0 (client opted out): scope 0, base records.
  const dns::Message z = ask(name, e.qtype, true, v4(0, 0, 0, 0, 0));
  CHECK(z.ecs.scope_prefix == 0);
  CHECK(rdatas_of(z, e.qtype) == e.rdatas);
}

TEST_CASE_METHOD(Fixture, "large answers are truncated over UDP without EDNS, whole over TCP", "[traffic][zone]") {
  const std::uint64_t i = find([](const GeneratedEntry& e) {
    std::size_t bytes = 0;
    for (const auto& rd : e.rdatas) bytes += rd.size() + 12;
    return plain(e) && e.qtype == wire::kTypeTxt && bytes > 600;
  });
  const dns::Message udp = ask(zone.name_wire(i), wire::kTypeTxt, false);
  CHECK(udp.tc);
  CHECK(udp.answer.empty());
  const dns::Message edns = ask(zone.name_wire(i), wire::kTypeTxt, true);
  CHECK_FALSE(edns.tc);
  CHECK(edns.answer.size() == zone.entry(i).rdatas.size());
  const dns::Message tcp = ask(zone.name_wire(i), wire::kTypeTxt, false, {}, false);
  CHECK_FALSE(tcp.tc);
  CHECK(tcp.answer.size() == zone.entry(i).rdatas.size());
}

TEST_CASE_METHOD(Fixture, "the question's case is preserved", "[traffic][zone]") {
  const std::uint64_t i = find([](const GeneratedEntry& e) { return plain(e) && e.qtype == wire::kTypeA; });
  Bytes upper = zone.name_wire(i);
  for (auto& c : upper)
    if (c >= 'a' && c <= 'z') c = static_cast<std::uint8_t>(c - 32);
  const dns::Message r = ask(upper, wire::kTypeA);
  CHECK(r.qname == upper);
  CHECK(r.answer.size() == zone.entry(i).rdatas.size());
}

TEST_CASE_METHOD(Fixture, "a TTL scale serves every TTL and the SOA minimum scaled, the rest as drawn",
                 "[traffic][zone]") {
  const UpstreamZone half(profile, 42, "zone.", 0.5);
  CHECK(half.served_ttl(30) == 15);
  CHECK(half.served_ttl(31) == 16);  // rounded to the nearest second
  CHECK(half.served_ttl(1) == 1);    // never 0: a TTL 0 answer would not be cached at all
  CHECK(zone.served_ttl(31) == 31);  // scale 1: as drawn
  const std::uint64_t i = find([](const GeneratedEntry& e) { return plain(e) && e.qtype == wire::kTypeA; });
  const dns::Message full = ask(zone.name_wire(i), wire::kTypeA);
  const dns::Message scaled = ask_of(half, half.name_wire(i), wire::kTypeA);
  REQUIRE(scaled.answer.size() == full.answer.size());
  for (std::size_t k = 0; k < full.answer.size(); ++k) {
    CHECK(scaled.answer[k].rdata == full.answer[k].rdata);
    CHECK(scaled.answer[k].ttl == half.served_ttl(full.answer[k].ttl));
  }
  // NXDOMAIN: the SOA's TTL and its minimum (the negative TTL a resolver caches) alike.
  const dns::Message nx = ask_of(half, wire::name_to_wire("nx1.zone."), wire::kTypeA);
  REQUIRE(nx.authority.size() == 1);
  const std::uint32_t want = half.served_ttl(profile.negative_ttl);
  CHECK(nx.authority[0].ttl == want);
  const Bytes& soa = nx.authority[0].rdata;
  REQUIRE(soa.size() >= 4);
  const std::size_t m = soa.size() - 4;
  CHECK((std::uint32_t{soa[m]} << 24 | std::uint32_t{soa[m + 1]} << 16 | std::uint32_t{soa[m + 2]} << 8 | soa[m + 3]) ==
        want);
  CHECK_THROWS_AS(UpstreamZone(profile, 42, "zone.", 0.0), std::invalid_argument);
  CHECK_THROWS_AS(UpstreamZone(profile, 42, "zone.", 1.5), std::invalid_argument);
}

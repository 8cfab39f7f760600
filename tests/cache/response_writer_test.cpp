// SPDX-License-Identifier: GPL-3.0-or-later
// Response writer: responses built from entries, parsed back by libknot.
#include <algorithm>

#include <catch2/catch.hpp>

#include "cache/response_writer.hpp"
#include "knot_parse.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {


struct Built {
  std::vector<std::uint8_t> entry;
  std::vector<std::uint8_t> wire;
  ResponseResult result;
};

// Encodes `a` for (client_qname, qtype) at kNow, then writes the response at `now`.
Built build(const Bytes& client_qname, std::uint16_t qtype, const Answer& a, std::uint32_t now,
            const QueryInfo& q_in = {}, const ResponseOptions& o = {}, std::size_t capacity = 65535) {
  Built b;
  const CacheKey key(client_qname, qtype);
  REQUIRE(encode_entry(key, a, kNow, b.entry) > 0);
  EntryReader reader(b.entry);
  REQUIRE(reader.valid());
  QueryInfo q = q_in;
  q.qname = client_qname;
  q.qtype = qtype;
  b.wire.assign(capacity, 0xEE);  // garbage: every byte sent must be written
  b.result = write_response(reader, q, now, o, b.wire.data(), capacity);
  b.wire.resize(b.result.size);
  return b;
}

ParsedMessage parse(const Built& b) {
  REQUIRE(b.result.size > 0);
  auto m = parse_with_knot(b.wire.data(), b.wire.size());
  REQUIRE(m.has_value());
  return *m;
}

std::size_t question_end(const Bytes& qname) { return 12 + qname.size() + 4; }

}  // namespace

TEST_CASE("a positive response: ID, flags, question as written, owners as pointers, TTLs", "[response]") {
  const Bytes client_qname = wire_name("WwW.ExAmple.COM");
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kA, 300, bytes_of({192, 0, 2, 1}));
  a.add(kAnswer, {}, kA, 900, bytes_of({192, 0, 2, 2}));
  QueryInfo q;
  q.id = 0xBEEF;
  q.flags = kFlagRd | kFlagCd;
  const Built b = build(client_qname, kA, a.answer(), kNow + 100, q);
  const ParsedMessage m = parse(b);

  REQUIRE(m.id == 0xBEEF);
  REQUIRE((m.flags & kFlagQr) != 0);
  REQUIRE((m.flags & kFlagRa) != 0);
  REQUIRE((m.flags & kFlagRd) != 0);
  REQUIRE((m.flags & kFlagCd) != 0);
  REQUIRE((m.flags & kFlagTc) == 0);
  REQUIRE((m.flags & kFlagAd) == 0);
  REQUIRE((m.flags & 0x000F) == 0);  // NOERROR
  REQUIRE(m.qdcount == 1);
  REQUIRE(m.ancount == 2);
  REQUIRE(m.nscount == 0);
  REQUIRE(m.arcount == 0);
  REQUIRE(hex_of(m.qname_as_written) == hex_of(client_qname));  // the client's case is kept
  REQUIRE(m.qtype == kA);
  REQUIRE(m.qclass == 1);
  REQUIRE(m.sections[0].size() == 2);
  for (const auto& r : m.sections[0]) REQUIRE(lower(r.owner) == wire_name("www.example.com"));
  REQUIRE(m.sections[0][0].ttl == 200);  // 300 - 100 seconds elapsed
  REQUIRE(m.sections[0][1].ttl == 800);  // the record's own TTL, minus the same 100
  REQUIRE(m.sections[0][0].rdata == bytes_of({192, 0, 2, 1}));
  REQUIRE(m.sections[0][1].rdata == bytes_of({192, 0, 2, 2}));
  // Both owners are the 2-byte pointer to the question (offset 12): 0xC00C.
  const std::size_t first = question_end(client_qname);
  REQUIRE(b.wire[first] == 0xC0);
  REQUIRE(b.wire[first + 1] == 0x0C);
  REQUIRE(b.wire[first + 2 + 10 + 4] == 0xC0);
  REQUIRE(b.wire[first + 2 + 10 + 4 + 1] == 0x0C);
  REQUIRE(b.result.size == first + 2 * (2 + 10 + 4));
}

TEST_CASE("opcode and RD come from the query and RD off stays off", "[response]") {
  OwnedAnswer a;
  a.add(kAnswer, {}, kA, 60, bytes_of({10, 0, 0, 1}));
  QueryInfo q;
  q.id = 7;
  q.flags = 0;
  const ParsedMessage m = parse(build(wire_name("x.example"), kA, a.answer(), kNow, q));
  REQUIRE((m.flags & kFlagRd) == 0);
  REQUIRE((m.flags & kFlagCd) == 0);
  REQUIRE((m.flags & kOpcodeMask) == 0);
  REQUIRE(m.id == 7);
}

TEST_CASE("remaining TTLs count down and never go below zero", "[response][ttl]") {
  OwnedAnswer a;
  a.ttl = 60;
  a.add(kAnswer, {}, kTXT, 60, txt_rdata("t"));
  a.add(kAnswer, {}, kTXT, 3600, txt_rdata("long"));
  for (std::uint32_t elapsed : {0u, 1u, 59u, 60u, 61u, 4000u}) {
    INFO("elapsed " << elapsed);
    const ParsedMessage m = parse(build(wire_name("t.example"), kTXT, a.answer(), kNow + elapsed));
    REQUIRE(m.sections[0][0].ttl == (elapsed < 60 ? 60 - elapsed : 0));
    REQUIRE(m.sections[0][1].ttl == (elapsed < 3600 ? 3600 - elapsed : 0));
  }
  // A clock behind the insertion time never adds TTL.
  REQUIRE(parse(build(wire_name("t.example"), kTXT, a.answer(), kNow - 10)).sections[0][0].ttl == 60);
}

TEST_CASE("CNAME chain: later owners are compressed against the CNAME target", "[response]") {
  const Bytes client_qname = wire_name("www.example.com");
  OwnedAnswer a;
  a.ttl = 120;
  a.add(kAnswer, {}, kCNAME, 120, wire_name("edge.cdn.example.net"));
  a.add(kAnswer, wire_name("edge.cdn.example.net"), kA, 120, bytes_of({198, 51, 100, 1}));
  a.add(kAnswer, wire_name("edge.cdn.example.net"), kA, 120, bytes_of({198, 51, 100, 2}));
  const Built b = build(client_qname, kA, a.answer(), kNow);
  const ParsedMessage m = parse(b);
  REQUIRE(m.ancount == 3);
  REQUIRE(m.sections[0][0].type == kCNAME);
  REQUIRE(m.sections[0][0].owner == client_qname);
  REQUIRE(m.sections[0][0].rdata == wire_name("edge.cdn.example.net"));
  REQUIRE(m.sections[0][1].owner == wire_name("edge.cdn.example.net"));
  REQUIRE(m.sections[0][2].owner == wire_name("edge.cdn.example.net"));
  // The CNAME target sits in the first record's rdata; the next owner points at it.
  const std::size_t target_at = question_end(client_qname) + 2 + 10;
  const std::size_t second_owner_at = target_at + wire_name("edge.cdn.example.net").size();
  REQUIRE(b.wire[second_owner_at] == (0xC0 | (target_at >> 8)));
  REQUIRE(b.wire[second_owner_at + 1] == (target_at & 0xFF));
}

TEST_CASE("names inside rdata arrive intact (MX, SOA, SRV)", "[response]") {
  OwnedAnswer a;
  a.add(kAnswer, {}, kMX, 300, mx_rdata(10, "mx1.example.com"));
  a.add(kAuthority, wire_name("example.com"), kSOA, 300, soa_rdata("ns1.example.com", "host.example.com", 1, 60));
  a.add(kAdditional, wire_name("_sip._udp.example.com"), kSRV, 300, srv_rdata(1, 2, 5060, "sip.example.com"));
  const ParsedMessage m = parse(build(wire_name("example.com"), kMX, a.answer(), kNow));
  REQUIRE(m.sections[0].at(0).rdata == mx_rdata(10, "mx1.example.com"));
  REQUIRE(m.sections[1].at(0).rdata == soa_rdata("ns1.example.com", "host.example.com", 1, 60));
  REQUIRE(m.sections[2].at(0).owner == wire_name("_sip._udp.example.com"));
  REQUIRE(m.sections[2].at(0).rdata == srv_rdata(1, 2, 5060, "sip.example.com"));
}

TEST_CASE("names inside NS, CNAME, MX and SOA rdata are compressed, and SRV targets are not", "[response][compression]") {
  const Bytes qname = wire_name("example.com");
  OwnedAnswer a;
  a.add(kAnswer, {}, kMX, 300, mx_rdata(10, "mx1.example.com"));
  a.add(kAnswer, {}, kMX, 300, mx_rdata(20, "mx2.EXAMPLE.com"));  // case aside, still a suffix
  a.add(kAuthority, wire_name("example.com"), kSOA, 300, soa_rdata("ns1.example.com", "host.example.com", 1, 60));
  a.add(kAdditional, wire_name("_sip._udp.example.com"), kSRV, 300, srv_rdata(1, 2, 5060, "sip.example.com"));
  const Built b = build(qname, kMX, a.answer(), kNow);
  const ParsedMessage m = parse(b);
  // By hand: header 12 + question 13+4; each MX: owner pointer 2 + 10 + preference 2 +
  // "mx1" 4 + pointer 2; SOA: pointer 2 + 10 + "ns1" 4 + ptr 2 + "host" 5 + ptr 2 + 20;
  // SRV: "_sip" 5 + "_udp" 5 + ptr 2 + 10 + 6 + the target whole (17).
  const std::size_t expected = 12 + 17 + 2 * (2 + 10 + 2 + 4 + 2) + (2 + 10 + 4 + 2 + 5 + 2 + 20) + (5 + 5 + 2 + 10 + 6 + 17);
  CHECK(b.result.size == expected);
  CHECK(m.sections[0].at(0).rdata == mx_rdata(10, "mx1.example.com"));
  CHECK(lower(m.sections[0].at(1).rdata) == lower(mx_rdata(20, "mx2.example.com")));
  CHECK(m.sections[1].at(0).rdata == soa_rdata("ns1.example.com", "host.example.com", 1, 60));
  CHECK(m.sections[2].at(0).owner == wire_name("_sip._udp.example.com"));
  CHECK(m.sections[2].at(0).rdata == srv_rdata(1, 2, 5060, "sip.example.com"));
  const Bytes srv_target = wire_name("sip.example.com");
  CHECK(std::search(b.wire.begin(), b.wire.end(), srv_target.begin(), srv_target.end()) != b.wire.end());
}

TEST_CASE("a chain of CNAMEs in one zone: every target after the first is a label and a pointer", "[response][compression]") {
  const Bytes qname = wire_name("a.example.org");
  OwnedAnswer a;
  a.add(kAnswer, {}, kCNAME, 60, wire_name("b.example.org"));
  a.add(kAnswer, wire_name("b.example.org"), kCNAME, 60, wire_name("c.example.org"));
  a.add(kAnswer, wire_name("c.example.org"), kA, 60, bytes_of({192, 0, 2, 7}));
  const Built b = build(qname, kA, a.answer(), kNow);
  const ParsedMessage m = parse(b);
  REQUIRE(m.ancount == 3);
  CHECK(m.sections[0][1].owner == wire_name("b.example.org"));
  CHECK(m.sections[0][1].rdata == wire_name("c.example.org"));
  CHECK(m.sections[0][2].owner == wire_name("c.example.org"));
  // question 15+4; CNAME: 2 + 10 + "b" 2 + ptr 2; CNAME: ptr 2 + 10 + "c" 2 + ptr 2; A: ptr 2 + 10 + 4.
  CHECK(b.result.size == 12 + 19 + 16 + 16 + 16);
}

TEST_CASE("additional records that do not fit are left out without TC", "[response]") {
  const Bytes qname = wire_name("deleg.example");
  OwnedAnswer a;
  a.add(kAnswer, {}, kA, 60, bytes_of({192, 0, 2, 1}));
  for (int i = 0; i < 40; ++i)
    a.add(kAdditional, wire_name("glue" + std::to_string(i) + ".deleg.example"), kA, 60,
          bytes_of({192, 0, 2, static_cast<std::uint8_t>(i)}));
  ResponseOptions o;
  o.max_size = 512;
  const Built b = build(qname, kA, a.answer(), kNow, {}, o);
  REQUIRE_FALSE(b.result.truncated);
  REQUIRE(b.result.size <= 512);
  const ParsedMessage m = parse(b);
  CHECK((m.flags & kFlagTc) == 0);
  CHECK(m.ancount == 1);
  CHECK(m.arcount > 0);
  CHECK(m.arcount < 40);
  CHECK(m.sections[2].size() == m.arcount);
}

TEST_CASE("a referral whose glue does not fit: what fits, with TC (RFC 9471)", "[response]") {
  const Bytes qname = wire_name("host.deleg.example");
  OwnedAnswer a;
  a.add(kAuthority, wire_name("deleg.example"), kNS, 60, wire_name("ns.deleg.example"));
  for (int i = 0; i < 40; ++i)
    a.add(kAdditional, wire_name("ns.deleg.example"), kA, 60, bytes_of({192, 0, 2, static_cast<std::uint8_t>(i)}));
  ResponseOptions o;
  o.max_size = 512;
  const Built b = build(qname, kA, a.answer(), kNow, {}, o);
  REQUIRE(b.result.truncated);
  REQUIRE(b.result.size <= 512);
  const ParsedMessage m = parse(b);
  CHECK((m.flags & kFlagTc) != 0);
  CHECK(m.nscount == 1);
  CHECK(m.arcount > 0);
  CHECK(m.arcount < 40);
}

TEST_CASE("NXDOMAIN and NODATA: rcode and the SOA in authority", "[response]") {
  const Bytes soa = soa_rdata("ns1.example.com", "hostmaster.example.com", 5, 900);
  OwnedAnswer nx;
  nx.rcode = 3;
  nx.add(kAuthority, wire_name("example.com"), kSOA, 900, soa);
  const ParsedMessage m = parse(build(wire_name("nope.example.com"), kA, nx.answer(), kNow + 10));
  REQUIRE((m.flags & 0x000F) == 3);
  REQUIRE(m.ancount == 0);
  REQUIRE(m.nscount == 1);
  REQUIRE(m.sections[1][0].type == kSOA);
  REQUIRE(m.sections[1][0].owner == wire_name("example.com"));
  REQUIRE(m.sections[1][0].ttl == 890);
  REQUIRE(m.sections[1][0].rdata == soa);

  OwnedAnswer nodata;
  nodata.add(kAuthority, wire_name("example.com"), kSOA, 900, soa);
  const ParsedMessage n = parse(build(wire_name("www.example.com"), kAAAA, nodata.answer(), kNow));
  REQUIRE((n.flags & 0x000F) == 0);
  REQUIRE(n.ancount == 0);
  REQUIRE(n.nscount == 1);
}

TEST_CASE("TC when the client's size is too small and nothing when the question does not fit", "[response]") {
  OwnedAnswer a;
  a.ttl = 60;
  for (int i = 0; i < 10; ++i) a.add(kAnswer, {}, kTXT, 60, Bytes(200, static_cast<std::uint8_t>('a' + i)));
  const Bytes qname = wire_name("big.example");
  QueryInfo q;
  q.id = 99;
  SECTION("plain UDP limit of 512") {
    ResponseOptions o;
    o.max_size = 512;
    const Built b = build(qname, kTXT, a.answer(), kNow, q, o);
    REQUIRE(b.result.truncated);
    REQUIRE(b.result.size == question_end(qname));
    const ParsedMessage m = parse(b);
    REQUIRE((m.flags & kFlagTc) != 0);
    REQUIRE(m.id == 99);
    REQUIRE(m.qdcount == 1);
    REQUIRE(m.ancount == 0);
    REQUIRE(m.arcount == 0);
  }
  SECTION("with EDNS the OPT is still sent") {
    ResponseOptions o;
    o.max_size = 1232;
    o.edns = true;
    const Built b = build(qname, kTXT, a.answer(), kNow, q, o);
    const ParsedMessage m = parse(b);
    REQUIRE((m.flags & kFlagTc) != 0);
    REQUIRE(m.ancount == 0);
    REQUIRE(m.arcount == 1);
    REQUIRE(m.has_opt);
  }
  SECTION("the caller's buffer is the limit too") {
    const Built b = build(qname, kTXT, a.answer(), kNow, q, {}, 600);
    REQUIRE(b.result.truncated);
    REQUIRE(parse(b).ancount == 0);
  }
  SECTION("a large enough limit fits everything") {
    ResponseOptions o;
    o.max_size = 4096;
    const Built b = build(qname, kTXT, a.answer(), kNow, q, o);
    REQUIRE_FALSE(b.result.truncated);
    REQUIRE(parse(b).ancount == 10);
    REQUIRE(b.result.size <= 4096);
  }
  SECTION("a buffer smaller than header + question gets nothing") {
    const Built b = build(qname, kTXT, a.answer(), kNow, q, {}, question_end(qname) - 1);
    REQUIRE(b.result.size == 0);
  }
}

TEST_CASE("EDNS: an OPT record is appended with our payload size, DO and options", "[response]") {
  OwnedAnswer a;
  a.add(kAnswer, {}, kA, 60, bytes_of({10, 0, 0, 1}));
  a.add(kAdditional, wire_name("ns.example"), kA, 60, bytes_of({10, 0, 0, 53}));
  ResponseOptions o;
  o.edns = true;
  o.edns_udp_size = 1400;
  o.edns_do = true;
  // An ECS option: code 8, length 7, family 1, source /24, scope /24, 192.0.2.
  const Bytes ecs = bytes_of({0, 8, 0, 7, 0, 1, 24, 24, 192, 0, 2});
  o.edns_options = ecs;
  const ParsedMessage m = parse(build(wire_name("e.example"), kA, a.answer(), kNow, {}, o));
  REQUIRE(m.arcount == 2);  // the glue and the OPT
  REQUIRE(m.sections[2].size() == 1);
  REQUIRE(m.has_opt);
  REQUIRE(m.opt_payload == 1400);
  REQUIRE(m.opt_do);
  REQUIRE(m.opt_rdata == ecs);

  ResponseOptions no_edns;
  const ParsedMessage plain = parse(build(wire_name("e.example"), kA, a.answer(), kNow, {}, no_edns));
  REQUIRE_FALSE(plain.has_opt);
  REQUIRE(plain.arcount == 1);
}

TEST_CASE("AD is set only for authentic entries and clients that asked (DO or AD)", "[response]") {
  OwnedAnswer authentic;
  authentic.authentic_data = true;
  authentic.add(kAnswer, {}, kA, 60, bytes_of({10, 0, 0, 1}));
  OwnedAnswer plain;
  plain.add(kAnswer, {}, kA, 60, bytes_of({10, 0, 0, 1}));
  ResponseOptions with_do;
  with_do.edns = true;
  with_do.edns_do = true;
  QueryInfo asks_ad;
  asks_ad.flags = kFlagRd | kFlagAd;
  const Bytes n = wire_name("ad.example");
  REQUIRE((parse(build(n, kA, authentic.answer(), kNow)).flags & kFlagAd) == 0);
  REQUIRE((parse(build(n, kA, authentic.answer(), kNow, {}, with_do)).flags & kFlagAd) != 0);
  REQUIRE((parse(build(n, kA, authentic.answer(), kNow, asks_ad)).flags & kFlagAd) != 0);
  REQUIRE((parse(build(n, kA, plain.answer(), kNow, {}, with_do)).flags & kFlagAd) == 0);
  REQUIRE((parse(build(n, kA, plain.answer(), kNow, asks_ad)).flags & kFlagAd) == 0);
}

TEST_CASE("AD of an entry inserted at or before ad_trusted_after is left out, on every writer path",
          "[response][cache]") {
  OwnedAnswer authentic;
  authentic.ttl = 300;
  authentic.authentic_data = true;
  authentic.add(kAnswer, {}, kA, 300, bytes_of({10, 0, 0, 1}));
  ResponseOptions o;
  o.edns = true;
  o.edns_do = true;
  const Bytes n = wire_name("ad.example");
  // write_response (stale answers, answers just fetched).
  o.ad_trusted_after = kNow - 1;
  CHECK((parse(build(n, kA, authentic.answer(), kNow + 5, {}, o)).flags & kFlagAd) != 0);
  o.ad_trusted_after = kNow;
  CHECK((parse(build(n, kA, authentic.answer(), kNow + 5, {}, o)).flags & kFlagAd) == 0);
  // lookup_response and lookup_responses (hits: the direct and in-arena writers).
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  const CacheKey key(n, kA);
  REQUIRE(c.insert(key, authentic.answer(), kNow) == InsertStatus::inserted);
  QueryInfo q;
  q.qname = n;
  q.qtype = kA;
  std::vector<std::uint8_t> out(512);
  for (const std::uint32_t cut : {kNow - 1, kNow, kNow + 3}) {
    INFO("cut " << cut);
    o.ad_trusted_after = cut;
    const bool ad = cut < kNow;
    const ResponseResult r = c.lookup_response(key, q, kNow + 5, o, out.data(), out.size());
    REQUIRE(r.size > 0);
    CHECK(((out[2] << 8 | out[3]) & kFlagAd) == (ad ? kFlagAd : 0));
    ResponseLookup l;
    l.key = &key;
    l.query = &q;
    l.options = &o;
    l.out = out.data();
    l.capacity = out.size();
    c.lookup_responses({&l, 1}, kNow + 5);
    REQUIRE(l.response.size > 0);
    CHECK(((out[2] << 8 | out[3]) & kFlagAd) == (ad ? kFlagAd : 0));
  }
}

TEST_CASE("lookup_response: a hit from the cache, nothing on a miss", "[response][cache]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kAAAA, 300, Bytes(16, 0x42));
  const Bytes client_qname = wire_name("Six.Example");
  const CacheKey key(client_qname, kAAAA);
  REQUIRE(c.insert(key, a.answer(), kNow) == InsertStatus::inserted);
  QueryInfo q;
  q.id = 4242;
  q.qname = client_qname;
  q.qtype = kAAAA;
  std::vector<std::uint8_t> out(512);
  LookupStatus st = LookupStatus::miss;
  const ResponseResult r = c.lookup_response(key, q, kNow + 30, {}, out.data(), out.size(), &st);
  REQUIRE(st == LookupStatus::hit);
  const auto m = parse_with_knot(out.data(), r.size);
  REQUIRE(m.has_value());
  REQUIRE(m->id == 4242);
  REQUIRE(m->qname_as_written == client_qname);
  REQUIRE(m->sections[0].size() == 1);
  REQUIRE(m->sections[0][0].ttl == 270);
  REQUIRE(m->sections[0][0].rdata == Bytes(16, 0x42));

  const CacheKey other(wire_name("seven.example"), kAAAA);
  REQUIRE(c.lookup_response(other, q, kNow, {}, out.data(), out.size(), &st).size == 0);
  REQUIRE(st == LookupStatus::miss);
  REQUIRE(c.lookup_response(key, q, kNow + 300, {}, out.data(), out.size(), &st).size == 0);
  REQUIRE(st == LookupStatus::expired);
}

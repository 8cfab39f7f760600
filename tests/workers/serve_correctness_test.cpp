// SPDX-License-Identifier: GPL-3.0-or-later
// Answers right in the corners: entry lifetime is the shortest TTL it holds,
// TTL 0 is never cached, DNSSEC records reach DO clients only, upstream TC is retried
// over TCP, truncation keeps the rcode, chains leaving the zone and referrals are cached,
// EDNS version and qtype 0 are answered as Knot does. Each case fails without its fix.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

// Asks `name` twice; returns how many upstream queries the two cost.
std::uint64_t upstream_cost_of_two(Service& s, const std::string& name, std::uint16_t qtype, bool tcp = false) {
  const std::uint64_t before = s.upstream.queries();
  for (std::uint16_t id : {1, 2}) {
    const auto q = make_query(id, name, qtype);
    const DnsReply r = tcp ? tcp_exchange(s.port, q) : udp_exchange(s.port, q);
    REQUIRE(r.answered);
    CHECK(r.rcode() != 2);
  }
  return s.upstream.queries() - before;
}

void check_no_expired_record(const DnsReply& r) {
  for (const ReplyRecord& rec : r.records) {
    INFO(rec.owner << " type " << rec.type);
    CHECK(rec.ttl > 0);
  }
}

}  // namespace

TEST_CASE("an entry dies with its shortest record: a 1 s CNAME link in a positive and an NXDOMAIN chain",
          "[serve][answers][ttl]") {
  Service s;
  for (const char* name : {"chain.test", "negchain.test"}) {
    INFO(name);
    const std::uint64_t before = s.upstream.queries();
    const DnsReply first = udp_exchange(s.port, make_query(1, name, 1));
    REQUIRE(first.answered);
    CHECK(first.count(0, 5) == 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    const DnsReply later = udp_exchange(s.port, make_query(2, name, 1));
    REQUIRE(later.answered);
    CHECK(later.rcode() == first.rcode());
    CHECK(later.count(0, 5) == 2);
    check_no_expired_record(later);
    CHECK(s.upstream.queries() == before + 2);  // the second went upstream: the entry had expired
  }
}

TEST_CASE("TTL 0 anywhere in an answer, and TTLs of 2^31 or more, are never cached", "[serve][answers][ttl]") {
  Service s;
  CHECK(upstream_cost_of_two(s, "zero.test", 1) == 2);
  CHECK(upstream_cost_of_two(s, "zeroauth.test", 1) == 2);
  CHECK(upstream_cost_of_two(s, "hugettl.test", 1) == 2);
  // The TTL of 2^31 is passed on as 0 (RFC 2181 section 8), not as a day.
  const DnsReply r = udp_exchange(s.port, make_query(3, "hugettl.test", 1));
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].ttl == 0);
  CHECK(upstream_cost_of_two(s, "a.test", 1) == 1);  // the control: cached
}

TEST_CASE("DO clients get NSEC and RRSIGs of negative and DNAME answers, miss and hit, and others do not",
          "[serve][answers][dnssec]") {
  Service s;
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round << " (0: miss, 1: hit)");
    const DnsReply signed_do = udp_exchange(s.port, make_query(10, "signed.test", 1, 1232, true));
    REQUIRE(signed_do.answered);
    CHECK(signed_do.rcode() == 3);
    CHECK(signed_do.count(1, 6) == 1);   // SOA
    CHECK(signed_do.count(1, 47) == 1);  // NSEC, owned by a name that is no ancestor of the qname
    CHECK(signed_do.count(1, 46) == 2);  // RRSIGs of SOA and NSEC
    const DnsReply signed_plain = udp_exchange(s.port, make_query(11, "signed.test", 1, 1232, false));
    REQUIRE(signed_plain.answered);
    CHECK(signed_plain.count(1, 6) == 1);
    CHECK(signed_plain.count(1, 47) == 0);
    CHECK(signed_plain.count(1, 46) == 0);
    const DnsReply dname_do = udp_exchange(s.port, make_query(12, "x.dname.test", 1, 1232, true));
    REQUIRE(dname_do.answered);
    CHECK(dname_do.count(0, 39) == 1);
    CHECK(dname_do.count(0, 46) == 1);  // the DNAME's RRSIG
    CHECK(dname_do.count(0, 5) == 1);
    CHECK(dname_do.count(0, 1) == 1);
  }
}

TEST_CASE("TC from the upstream: retried over TCP, cached whole, TCP clients answered in full", "[serve][answers][tc]") {
  Service s;
  const DnsReply over_tcp = tcp_exchange(s.port, make_query(20, "huge.test", 16));
  REQUIRE(over_tcp.answered);
  CHECK_FALSE(over_tcp.tc());
  CHECK(over_tcp.rcode() == 0);
  CHECK(over_tcp.answers.size() == 10);
  CHECK(s.upstream.tcp_queries() == 1);
  const std::uint64_t upstream_before = s.upstream.queries();
  // A client offering 4,096 bytes still gets at most max_udp_size (1232 by default): TC.
  const DnsReply big_udp = udp_exchange(s.port, make_query(21, "huge.test", 16, 4096));
  REQUIRE(big_udp.answered);
  CHECK(big_udp.tc());
  CHECK(big_udp.rcode() == 0);
  CHECK(big_udp.wire.size() <= 1232);
  const DnsReply small_udp = udp_exchange(s.port, make_query(22, "huge.test", 16, 1232));
  REQUIRE(small_udp.answered);
  CHECK(small_udp.tc());
  CHECK(small_udp.rcode() == 0);
  CHECK(s.upstream.queries() == upstream_before);  // both from the cache
}

TEST_CASE("max_udp_size: 4096 lets a client that offers 4,096 bytes have a 2 KB answer over UDP",
          "[serve][answers][tc]") {
  Service s;
  s.serve.reset();
  s.start({"--config", write_config("max_udp_size: 4096\n")});
  REQUIRE(tcp_exchange(s.port, make_query(20, "huge.test", 16)).answered);  // cached whole
  const DnsReply big_udp = udp_exchange(s.port, make_query(21, "huge.test", 16, 4096));
  REQUIRE(big_udp.answered);
  CHECK_FALSE(big_udp.tc());
  CHECK(big_udp.answers.size() == 10);
  CHECK(big_udp.wire.size() > 1232);
  // Still no more than the client offers.
  const DnsReply small_udp = udp_exchange(s.port, make_query(22, "huge.test", 16, 1232));
  REQUIRE(small_udp.answered);
  CHECK(small_udp.tc());
}

TEST_CASE("the upstream's AD bit reaches clients only from upstreams marked trusted (RFC 6840 5.8)",
          "[serve][answers][dnssec]") {
  {
    Service s;  // upstreams_trust_ad: false (the default)
    for (int i = 0; i < 2; ++i) {  // the miss, then the hit
      const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(40 + i), "ad.test", 1, 1232, true));
      REQUIRE(r.answered);
      CHECK(r.rcode() == 0);
      CHECK(r.answers.size() == 1);
      CHECK_FALSE(r.ad());
    }
  }
  {
    Service s;
    s.serve.reset();
    s.start({"--config", write_config("upstreams_trust_ad: true\n")});
    for (int i = 0; i < 2; ++i) {
      const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(50 + i), "ad.test", 1, 1232, true));
      REQUIRE(r.answered);
      CHECK(r.ad());
    }
    // A client that asks for neither DO nor AD gets no AD (RFC 6840 5.8), trusted or not.
    CHECK_FALSE(udp_exchange(s.port, make_query(52, "ad.test", 1, 1232, false)).ad());
    // An answer the upstream did not mark stays unmarked.
    CHECK_FALSE(udp_exchange(s.port, make_query(53, "a.test", 1, 1232, true)).ad());
  }
  {
    Service s;  // a forward zone's own trust_ad
    s.serve.reset();
    s.start({"--config", write_config("forward_zones:\n  - {zone: test, upstreams: [127.0.0.1:" +
                                      std::to_string(s.upstream.port()) + "], trust_ad: true}\n")});
    // ...beside the "." zone (--upstream, the same server, not trusted): the longest zone wins.
    CHECK(udp_exchange(s.port, make_query(54, "ad.test", 1, 1232, true)).ad());
  }
}

TEST_CASE("a truncated answer keeps its rcode (NXDOMAIN at the end of a long chain)", "[serve][answers][tc]") {
  Service s;
  const DnsReply small = udp_exchange(s.port, make_query(30, "bignx.test", 1, 512));
  REQUIRE(small.answered);
  CHECK(small.tc());
  CHECK(small.rcode() == 3);
  const DnsReply full = tcp_exchange(s.port, make_query(31, "bignx.test", 1));
  REQUIRE(full.answered);
  CHECK_FALSE(full.tc());
  CHECK(full.rcode() == 3);
  CHECK(full.count(0, 5) == 5);
  CHECK(full.count(1, 6) == 1);
}

TEST_CASE("chains leaving the upstream's data, ANY at a CNAME owner and referrals are cached", "[serve][answers]") {
  Service s;
  CHECK(upstream_cost_of_two(s, "out.test", 1) == 1);
  CHECK(upstream_cost_of_two(s, "cname.test", 255, true) == 1);
  CHECK(upstream_cost_of_two(s, "x.deleg.test", 1) == 1);
  const DnsReply referral = udp_exchange(s.port, make_query(40, "x.deleg.test", 1));
  REQUIRE(referral.answered);
  CHECK(referral.count(1, 2) == 1);  // NS
  CHECK(referral.count(2, 1) == 1);  // glue
  const DnsReply any = tcp_exchange(s.port, make_query(41, "cname.test", 255));
  CHECK(any.count(0, 5) == 1);
  CHECK(any.records.size() == 1);
}

TEST_CASE("EDNS version 1 gets BADVERS with an OPT of version 0, and qtype 0 gets NOTIMP", "[serve][answers][protocol]") {
  Service s;
  const DnsReply badvers = udp_exchange(s.port, make_query(50, "a.test", 1, 1232, false, 1));
  REQUIRE(badvers.answered);
  CHECK(badvers.extended_rcode == 16);
  CHECK(badvers.rcode() == 0);
  CHECK(badvers.has_opt);
  CHECK(badvers.records.empty());
  const DnsReply type0 = udp_exchange(s.port, make_query(51, "a.test", 0));
  REQUIRE(type0.answered);
  CHECK(type0.rcode() == 4);
  CHECK(s.upstream.queries() == 0);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Answers through dnsarena equal the upstream's; the second query is a hit; ECS
// separation; TCP; truncation.
#include <catch2/catch.hpp>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

TEST_CASE("answers equal the upstream's (kdig, TTL aside) and the second query is a hit", "[serve]") {
  Service s;
  const std::vector<std::pair<std::string, std::string>> questions = {
      {"a.test.", "A"},         {"aaaa.test.", "AAAA"},     {"txt.test.", "TXT"},
      {"cname.test.", "A"},     {"nxdomain.test.", "A"},    {"nodata.test.", "AAAA"}};
  for (const auto& [name, type] : questions) {
    INFO(name << " " << type);
    const std::string direct = kdig_records(s.upstream.port(), name, type);
    const std::uint64_t upstream_before = s.upstream.queries();
    const std::string first = kdig_records(s.port, name, type);
    const std::uint64_t upstream_after_first = s.upstream.queries();
    const std::string second = kdig_records(s.port, name, type);
    REQUIRE_FALSE(direct.empty());
    // The upstream's out-of-bailiwick additional record is not part of the comparison
    // (kdig prints answer and authority only) and is checked below.
    CHECK(first == direct);
    CHECK(second == direct);
    CHECK(upstream_after_first == upstream_before + 1);
    CHECK(s.upstream.queries() == upstream_after_first);  // the second came from the cache
  }
  const auto stats = serve_stats(s.segment);
  CHECK(stats["total"]["hits"].get<std::uint64_t>() >= questions.size());
  CHECK(stats["total"]["upstream_queries"].get<std::uint64_t>() == questions.size());
  // The out-of-bailiwick additional record of a.test. was not cached.
  const std::string additional = run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(s.port) +
                                             " a.test. A +noall +additional +timeout=2 +retry=0");
  CHECK(additional.find("evil.example") == std::string::npos);
  // The client's ID and question case are kept on a hit.
  const DnsReply r = udp_exchange(s.port, make_query(0xBEEF, "A.TeSt", 1));
  REQUIRE(r.answered);
  CHECK(r.id == 0xBEEF);
  CHECK(std::string(r.wire.begin() + 13, r.wire.begin() + 14) == "A");
  CHECK(std::string(r.wire.begin() + 15, r.wire.begin() + 19) == "TeSt");
  CHECK(r.answers.size() == 2);
}

TEST_CASE("TCP answers several queries on one connection and TC when the answer does not fit", "[serve]") {
  Service s;
  const std::string out = run_command(kdig_program() + " @127.0.0.1 -p " + std::to_string(s.port) +
                                      " +tcp +keepopen +noall +answer +timeout=2 +retry=0 a.test. A txt.test. TXT "
                                      "cname.test. A 2>&1");
  CHECK(out.find("192.0.2.1") != std::string::npos);
  CHECK(out.find("hello upstream") != std::string::npos);
  CHECK(out.find("192.0.2.9") != std::string::npos);
  CHECK(s.total("queries_tcp") == 3);

  // big.test. TXT is ~850 bytes: no EDNS -> 512-byte limit -> TC, no records.
  const DnsReply small = udp_exchange(s.port, make_query(7, "big.test", 16, 0));
  REQUIRE(small.answered);
  CHECK(small.tc());
  CHECK(small.answers.empty());
  // The same from the cache (second time), and with EDNS 1232 it fits.
  CHECK(udp_exchange(s.port, make_query(8, "big.test", 16, 0)).tc());
  const DnsReply edns = udp_exchange(s.port, make_query(9, "big.test", 16, 1232));
  CHECK_FALSE(edns.tc());
  CHECK(edns.answers.size() == 4);
  // Over TCP it always fits.
  const DnsReply tcp = tcp_exchange(s.port, make_query(10, "big.test", 16, 0));
  CHECK_FALSE(tcp.tc());
  CHECK(tcp.answers.size() == 4);
  CHECK(s.total("truncated") >= 2);
  CHECK(s.upstream.queries() == 4);  // a, txt, cname, big
}

TEST_CASE("ECS: different /24s get their own answers, the same /24 shares one", "[serve][ecs]") {
  Service s({"--ecs", "forward"});
  auto ask = [&](const std::string& subnet) {
    return kdig_records(s.port, "ecs.test.", "A", "+subnet=" + subnet);
  };
  const std::string a1 = ask("10.1.1.7/32");
  const std::uint64_t after_a1 = s.upstream.queries();
  const std::string a2 = ask("10.1.1.200/32");  // same /24
  const std::string b = ask("10.2.2.7/32");     // another /24
  CHECK(a1.find("10.1.1.1") != std::string::npos);
  CHECK(a2 == a1);
  CHECK(b.find("10.2.2.1") != std::string::npos);
  CHECK(after_a1 == 1);
  CHECK(s.upstream.queries() == 2);  // a2 was a hit on the /24 entry
  // Names whose answer does not depend on the subnet (no ECS in the reply) are shared.
  ask("10.3.3.3/32");
  CHECK(s.upstream.queries() == 3);
  CHECK(kdig_records(s.port, "a.test.", "A", "+subnet=10.4.4.4/32") ==
        kdig_records(s.port, "a.test.", "A", "+subnet=10.5.5.5/32"));
  CHECK(s.upstream.queries() == 4);
}

TEST_CASE("ECS synthesize: the subnet comes from the client's source address", "[serve][ecs]") {
  Service s({"--ecs", "synthesize"});
  const std::string from1 = kdig_records(s.port, "ecs.test.", "A", "-b 127.0.1.5");
  const std::string from1b = kdig_records(s.port, "ecs.test.", "A", "-b 127.0.1.9");
  const std::string from2 = kdig_records(s.port, "ecs.test.", "A", "-b 127.0.2.5");
  CHECK(from1.find("10.0.1.1") != std::string::npos);
  CHECK(from1b == from1);
  CHECK(from2.find("10.0.2.1") != std::string::npos);
  CHECK(s.upstream.queries() == 2);
}

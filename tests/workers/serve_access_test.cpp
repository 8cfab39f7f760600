// SPDX-License-Identifier: GPL-3.0-or-later
// Who may ask: access control per subnet, response rate limiting with
// slip, ANY over UDP answered with one RRset (RFC 8482); UDP socket buffers as configured.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

TEST_CASE("access control: allow, refuse, deny and unmatched sources, over UDP and TCP", "[serve][access]") {
  Service s({"--access-control", "127.0.0.1/32 allow", "--access-control", "127.0.0.2 refuse", "--access-control",
             "127.0.0.3/32 deny"});
  const DnsReply allowed = udp_exchange(s.port, make_query(1, "a.test", 1), std::chrono::milliseconds(2000), "127.0.0.1");
  REQUIRE(allowed.answered);
  CHECK(allowed.rcode() == 0);
  const DnsReply refused = udp_exchange(s.port, make_query(2, "a.test", 1), std::chrono::milliseconds(2000), "127.0.0.2");
  REQUIRE(refused.answered);
  CHECK(refused.rcode() == 5);
  CHECK(refused.id == 2);
  CHECK(refused.records.empty());
  const DnsReply denied = udp_exchange(s.port, make_query(3, "a.test", 1), std::chrono::milliseconds(500), "127.0.0.3");
  CHECK_FALSE(denied.answered);
  const DnsReply unmatched = udp_exchange(s.port, make_query(4, "txt.test", 16), std::chrono::milliseconds(2000), "127.0.0.4");
  REQUIRE(unmatched.answered);
  CHECK(unmatched.rcode() == 5);
  CHECK(s.upstream.queries() == 1);  // only the allowed client's miss went upstream
  CHECK(s.total("refused") == 3);
  // TCP from 127.0.0.1 is allowed too.
  const DnsReply tcp = tcp_exchange(s.port, make_query(5, "a.test", 1));
  REQUIRE(tcp.answered);
  CHECK(tcp.rcode() == 0);
}

TEST_CASE("the default access control answers loopback clients", "[serve][access]") {
  Service s;
  const DnsReply r = udp_exchange(s.port, make_query(6, "a.test", 1), std::chrono::milliseconds(2000), "127.0.0.5");
  REQUIRE(r.answered);
  CHECK(r.rcode() == 0);
}

TEST_CASE("rate limiting per client subnet: the excess is dropped or slipped with TC, and TCP still answers",
          "[serve][access][rrl][timing]") {
  Service s({"--rate-limit", "20"}, 1);
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).rcode() == 0);  // warm the cache
  int full = 0, slipped = 0, dropped = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(100 + i), "a.test", 1),
                                    std::chrono::milliseconds(50));
    if (!r.answered) ++dropped;
    else if (r.tc()) ++slipped;
    else ++full;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("full " << full << ", slipped " << slipped << ", dropped " << dropped << " in " << seconds << " s");
  // At most 20 full answers per started second (the warm-up query counts too).
  CHECK(full <= 20 * (static_cast<int>(seconds) + 2));
  CHECK(slipped > 0);
  CHECK(dropped > 0);
  CHECK(std::abs(slipped - dropped) <= dropped / 4 + 5);  // slip 2: every second limited answer
  CHECK(s.total("rate_limited") == static_cast<std::uint64_t>(slipped + dropped));
  const DnsReply tcp = tcp_exchange(s.port, make_query(9, "a.test", 1));
  REQUIRE(tcp.answered);
  CHECK_FALSE(tcp.tc());
  CHECK(tcp.answers.size() == 2);
}

TEST_CASE("ANY over UDP gets one RRset (RFC 8482) with its rcode kept, over TCP the whole answer",
          "[serve][access][any]") {
  Service s;
  for (int round = 0; round < 2; ++round) {  // miss, then hit
    INFO("round " << round);
    const DnsReply udp = udp_exchange(s.port, make_query(1, "multi.test", 255));
    REQUIRE(udp.answered);
    CHECK(udp.rcode() == 0);
    CHECK(udp.records.size() == 2);  // the two A records: one RRset of four records' worth
    CHECK(udp.count(0, 1) == 2);
  }
  const DnsReply tcp = tcp_exchange(s.port, make_query(2, "multi.test", 255));
  REQUIRE(tcp.answered);
  CHECK(tcp.records.size() == 4);
  CHECK(s.upstream.queries() == 1);
  // A name that does not exist keeps its NXDOMAIN (and SOA).
  const DnsReply nx = udp_exchange(s.port, make_query(3, "nothing.test", 255));
  REQUIRE(nx.answered);
  CHECK(nx.rcode() == 3);
  CHECK(nx.count(1, 6) == 1);
  CHECK(s.total("any_minimal") == 3);
}

TEST_CASE("the UDP socket's buffers are sized as configured (udp.receive_buffer)", "[serve][access]") {
  Service s({"-c", write_config("udp:\n  receive_buffer: 8M\n  send_buffer: 2M\n")}, 1);
  // ss prints skmem:(r0,rb<receive buffer>,t0,tb<send buffer>,...): the kernel doubles the
  // value it was given.
  const std::string out = run_command("ss -uamn 'sport = :" + std::to_string(s.port) + "'");
  INFO(out);
  const std::size_t rb = out.find(",rb");
  const std::size_t tb = out.find(",tb");
  REQUIRE(rb != std::string::npos);
  REQUIRE(tb != std::string::npos);
  CHECK(std::stoull(out.substr(rb + 3)) >= 8ull << 20);
  CHECK(std::stoull(out.substr(tb + 3)) >= 2ull << 20);
}

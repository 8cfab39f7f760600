// Upstream failures: down -> SERVFAIL within the timeout; spoofed or mismatched replies
// are ignored and not cached.
#include <catch2/catch.hpp>
#include <chrono>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

TEST_CASE("an upstream that is down: SERVFAIL within the timeout", "[serve][upstream][timing]") {
  Service s;
  for (const UpstreamMode mode : {UpstreamMode::silent}) {
    s.upstream.set_mode(mode);
    const auto t0 = std::chrono::steady_clock::now();
    const DnsReply r = udp_exchange(s.port, make_query(5, "a.test", 1), std::chrono::milliseconds(3000));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(r.answered);
    CHECK(r.rcode() == 2);
    CHECK(r.id == 5);
    CHECK(ms >= 250);   // waited for the 300 ms timeout
    CHECK(ms < 1000);   // and not much longer
  }
  CHECK(s.total("upstream_timeouts") == 1);
  CHECK(s.total("servfail") == 1);
}

TEST_CASE("an upstream port with nobody listening: SERVFAIL at once", "[serve][upstream][timing]") {
  const std::uint16_t dead = free_port();
  Service s({"--upstream", "127.0.0.1:" + std::to_string(dead)});
  const auto t0 = std::chrono::steady_clock::now();
  const DnsReply r = udp_exchange(s.port, make_query(6, "a.test", 1), std::chrono::milliseconds(3000));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.answered);
  CHECK(r.rcode() == 2);
  CHECK(ms < 400);
}

TEST_CASE("a second upstream is tried after the first times out", "[serve][upstream]") {
  TestUpstream second;
  Service s;
  s.serve.reset();
  s.start({"--upstream", "127.0.0.1:" + std::to_string(s.upstream.port()), "--upstream",
           "127.0.0.1:" + std::to_string(second.port())});
  s.upstream.set_mode(UpstreamMode::silent);
  const DnsReply r = udp_exchange(s.port, make_query(7, "a.test", 1));
  REQUIRE(r.answered);
  CHECK(r.rcode() == 0);
  CHECK(r.answers.size() == 2);
  CHECK(s.upstream.queries() == 1);
  CHECK(second.queries() == 1);
}

TEST_CASE("replies with a wrong ID, from a wrong port, or for another question are ignored and not cached",
          "[serve][upstream][spoof]") {
  Service s;
  for (const UpstreamMode mode : {UpstreamMode::wrong_id, UpstreamMode::wrong_port, UpstreamMode::wrong_question}) {
    INFO("mode " << static_cast<int>(mode));
    s.upstream.set_mode(mode);
    const std::uint64_t before = s.upstream.queries();
    const DnsReply r = udp_exchange(s.port, make_query(9, "a.test", 1), std::chrono::milliseconds(3000));
    REQUIRE(r.answered);
    CHECK(r.rcode() == 2);  // the bogus reply was ignored: the attempt timed out
    CHECK(r.answers.empty());
    CHECK(s.upstream.queries() == before + 1);
    CHECK(serve_stats(s.segment)["entries"].get<std::uint64_t>() == 0);
  }
  // Back to normal: a new upstream query (nothing was cached), then the right answer.
  s.upstream.set_mode(UpstreamMode::normal);
  const std::uint64_t before = s.upstream.queries();
  const DnsReply r = udp_exchange(s.port, make_query(10, "a.test", 1));
  CHECK(r.rcode() == 0);
  CHECK(r.answers.size() == 2);
  CHECK(s.upstream.queries() == before + 1);
}

TEST_CASE("identical misses in flight share one upstream query", "[serve][upstream]") {
  Service s({}, 1);
  s.upstream.set_mode(UpstreamMode::silent);  // hold the first query in flight
  // Three clients ask while nothing answers: all three get SERVFAIL after one attempt.
  std::vector<std::thread> clients;
  std::atomic<int> servfails{0};
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&, i] {
      if (udp_exchange(s.port, make_query(static_cast<std::uint16_t>(20 + i), "txt.test", 16)).rcode() == 2) ++servfails;
    });
  for (auto& c : clients) c.join();
  CHECK(servfails == 3);
  CHECK(s.upstream.queries() == 1);
}

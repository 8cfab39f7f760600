// SPDX-License-Identifier: GPL-3.0-or-later
// Upstream failures: down -> SERVFAIL within the timeout; spoofed or mismatched replies
// are ignored and not cached.
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "tests/workers/service_fixture.hpp"
#include "workers/serve_config.hpp"

using namespace dnsarena::test;

TEST_CASE("an upstream that is down: SERVFAIL within the timeout", "[serve][upstream][timing]") {
  Service s({"--upstream-attempts", "1"});
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
  // Which upstream a miss asks first is random (upstream_health.hpp: neither has replied
  // yet, so both rank alike): misses until one asked the silent one first. That one waits
  // for its timeout and is then answered by the other.
  for (int i = 0; i < 40 && s.upstream.queries() == 0; ++i) {
    const std::uint64_t asked = second.queries();
    const DnsReply r = udp_exchange(s.port, make_query(7, i == 0 ? "a.test" : "n" + std::to_string(i) + ".test", 1));
    REQUIRE(r.answered);
    CHECK(r.rcode() == (i == 0 ? 0 : 3));
    if (i == 0) CHECK(r.answers.size() == 2);
    CHECK(second.queries() == asked + 1);
  }
  CHECK(s.upstream.queries() == 1);
}

TEST_CASE("replies with a wrong ID, from a wrong port, or for another question are ignored and not cached",
          "[serve][upstream][spoof]") {
  // Three ignored replies are three silent attempts: with the default down_after_timeouts
  // (3) the upstream would then be down and the next miss fail at once until a probe
  // (serve_upstream_health_test.cpp); this test is about the replies.
  Service s({"--upstream-attempts", "1", "-c", write_config("upstream_health: {down_after_timeouts: 4}\n")});
  // One name per mode: a failed name is not asked again within its failure window (1 s).
  struct Case {
    UpstreamMode mode;
    const char* name;
    std::uint16_t qtype;
  };
  const Case cases[] = {{UpstreamMode::wrong_id, "a.test", 1},
                        {UpstreamMode::wrong_port, "aaaa.test", 28},
                        {UpstreamMode::wrong_question, "txt.test", 16}};
  for (const Case& c : cases) {
    INFO("mode " << static_cast<int>(c.mode));
    s.upstream.set_mode(c.mode);
    const std::uint64_t before = s.upstream.queries();
    const DnsReply r = udp_exchange(s.port, make_query(9, c.name, c.qtype), std::chrono::milliseconds(3000));
    REQUIRE(r.answered);
    CHECK(r.rcode() == 2);  // the bogus reply was ignored: the attempt timed out
    CHECK(r.answers.empty());
    CHECK(s.upstream.queries() == before + 1);
    CHECK(serve_stats(s.segment)["entries"].get<std::uint64_t>() == 0);
  }
  // Back to normal, once a.test's failure window has ended: a new upstream query (nothing
  // was cached), then the right answer.
  s.upstream.set_mode(UpstreamMode::normal);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::uint64_t before = s.upstream.queries();
  const DnsReply r = udp_exchange(s.port, make_query(10, "a.test", 1));
  CHECK(r.rcode() == 0);
  CHECK(r.answers.size() == 2);
  CHECK(s.upstream.queries() == before + 1);
}

TEST_CASE("identical misses in flight share one upstream query", "[serve][upstream]") {
  Service s({"--upstream-attempts", "1"}, 1);
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

TEST_CASE("a lost packet is retried on the same upstream, after the timeout, with backoff", "[serve][upstream][timing]") {
  Service s;  // one upstream, default attempts: 3
  s.upstream.set_mode(UpstreamMode::drop_first);
  const auto t0 = std::chrono::steady_clock::now();
  const DnsReply r = udp_exchange(s.port, make_query(30, "a.test", 1), std::chrono::milliseconds(3000));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.answered);
  CHECK(r.rcode() == 0);
  CHECK(r.answers.size() == 2);
  CHECK(s.upstream.queries() == 2);
  CHECK(ms >= 250);  // the first attempt's 300 ms timeout ran out first
  CHECK(s.total("upstream_timeouts") == 1);
  CHECK(s.total("servfail") == 0);
  // Silent upstream: attempts waiting 300, 600 and 1200 ms; the client gets SERVFAIL at
  // its response deadline (stale.client_timeout_ms, 1800 ms), three attempts sent by then.
  s.upstream.set_mode(UpstreamMode::silent);
  const auto t1 = std::chrono::steady_clock::now();
  const DnsReply f = udp_exchange(s.port, make_query(31, "txt.test", 16), std::chrono::milliseconds(5000));
  const auto ms2 = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t1).count();
  REQUIRE(f.answered);
  CHECK(f.rcode() == 2);
  CHECK(f.ede == 22);
  CHECK(ms2 >= 1700);
  CHECK(ms2 < 3000);
  CHECK(s.upstream.queries() == 5);
}

TEST_CASE("upstream queries carry a random-case name (0x20) that the reply must echo exactly", "[serve][upstream][spoof]") {
  Service s({"--upstream-attempts", "1"});
  for (int i = 0; i < 16; ++i) udp_exchange(s.port, make_query(static_cast<std::uint16_t>(40 + i), "nx" + std::to_string(i) + ".test", 1));
  const std::vector<std::string> names = s.upstream.names_received();
  REQUIRE(names.size() == 16);
  int mixed = 0;
  for (const std::string& n : names)
    if (std::any_of(n.begin(), n.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) ++mixed;
  CHECK(mixed >= 12);  // each name has 6 letters: all-lowercase by chance is 1 in 64
}

TEST_CASE("an upstream that does not preserve the name's case: asked again in lowercase, answered and counted",
          "[serve][upstream][spoof]") {
  Service s({"--upstream-attempts", "1"});
  s.upstream.set_mode(UpstreamMode::lowercase_echo);
  const std::uint64_t entries = serve_stats(s.segment)["entries"].get<std::uint64_t>();
  // 28 letters: the random case keeps them all lowercase once in 2^28 (no fallback then).
  const std::string name = "nxdomainwithmanylettersinit.test";
  const DnsReply r = udp_exchange(s.port, make_query(60, name, 1), std::chrono::milliseconds(3000));
  REQUIRE(r.answered);
  CHECK(r.rcode() == 3);  // the upstream's NXDOMAIN, with its SOA: cached
  // Two queries: the random-case one (its lowercased echo refused) and the lowercase one.
  const std::vector<std::string> names = s.upstream.names_received();
  REQUIRE(names.size() == 2);
  CHECK(names[0] != name + ".");
  CHECK(names[1] == name + ".");
  CHECK(s.total("upstream_case_fallbacks") == 1);
  CHECK(s.total("servfail") == 0);
  CHECK(serve_stats(s.segment)["entries"].get<std::uint64_t>() == entries + 1);
  // A server that preserves case costs no fallback.
  s.upstream.set_mode(UpstreamMode::normal);
  REQUIRE(udp_exchange(s.port, make_query(61, "a.test", 1)).rcode() == 0);
  CHECK(s.total("upstream_case_fallbacks") == 1);
}

// Sends n queries at once (query(i) builds the i-th); returns how many got SERVFAIL
// within a second, i.e. before any upstream attempt could have timed out.
// Waits until the (only) worker answers UDP: a NOTIFY, answered NOTIMP by the worker
// itself (no upstream query, no cache entry). wait_ready() proves only that the kernel
// accepts TCP on the port, which it does before the worker's loop runs; a worker started
// late (ASan, a loaded CI machine) would otherwise eat into fast_servfails' 1 s budget.
static void require_worker_answers(Service& s) {
  std::vector<std::uint8_t> notify = make_query(1, "ready.test", 6);
  notify[2] = static_cast<std::uint8_t>((notify[2] & 0x87) | (4 << 3));  // opcode NOTIFY
  if (!udp_answered_within(s.port, notify)) FAIL("the worker did not answer UDP within 10 s: " << s.serve->log());
}

static int fast_servfails(Service& s, int n, const std::function<std::vector<std::uint8_t>(int)>& query) {
  std::vector<std::thread> clients;
  std::atomic<int> fast{0};
  for (int i = 0; i < n; ++i)
    clients.emplace_back([&, i] {
      const auto t0 = std::chrono::steady_clock::now();
      const DnsReply r = udp_exchange(s.port, query(i), std::chrono::milliseconds(4000));
      if (r.rcode() == 2 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1000)) ++fast;
    });
  for (auto& c : clients) c.join();
  return fast;
}

TEST_CASE("misses in flight are bounded per worker and per name, and over the bound: SERVFAIL at once",
          "[serve][upstream][flood][timing]") {
  SECTION("per worker") {
    Service s({"--upstream-attempts", "1", "--upstream-timeout-ms", "2000", "-c",
               write_config("upstream_max_in_flight: 4\n")}, 1);
    s.upstream.set_mode(UpstreamMode::silent);
    require_worker_answers(s);
    CHECK(fast_servfails(s, 10, [](int i) {
            return make_query(static_cast<std::uint16_t>(70 + i), "f" + std::to_string(i) + ".test", 1);
          }) == 6);
    CHECK(s.upstream.queries() == 4);
    CHECK(s.total("upstream_overload") == 6);
  }
  SECTION("per name, whatever the ECS subnet") {
    Service s({"--upstream-attempts", "1", "--upstream-timeout-ms", "2000", "--ecs", "forward", "-c",
               write_config("upstream_max_per_name: 2\n")}, 1);
    s.upstream.set_mode(UpstreamMode::silent);
    require_worker_answers(s);
    CHECK(fast_servfails(s, 5, [](int i) {
            return make_ecs_query(static_cast<std::uint16_t>(80 + i), "ecs.test", 1, 24,
                                  {10, static_cast<std::uint8_t>(i), 0, 0});
          }) == 3);
    CHECK(s.upstream.queries() == 2);
  }
  SECTION("per name across workers: two workers together hold no more than the bound") {
    // 20 clients, each from its own source port, so SO_REUSEPORT spreads them over both
    // workers; before the bound was host-wide each worker allowed 2 (4 in all).
    Service s({"--upstream-attempts", "1", "--upstream-timeout-ms", "2000", "--ecs", "forward", "-c",
               write_config("upstream_max_per_name: 2\n")}, 2);
    s.upstream.set_mode(UpstreamMode::silent);
    const int fast = fast_servfails(s, 20, [](int i) {
      return make_ecs_query(static_cast<std::uint16_t>(90 + i), "ecs.test", 1, 24,
                            {10, static_cast<std::uint8_t>(i), 0, 0});
    });
    // Two workers racing at bound - 1 may both back out (in_flight_names.hpp): at most 2.
    const auto asked = static_cast<int>(s.upstream.queries());
    CHECK(asked >= 1);
    CHECK(asked <= 2);
    CHECK(fast == 20 - asked);
    CHECK(s.total("upstream_overload_per_name") == static_cast<std::uint64_t>(20 - asked));
    const nlohmann::json st = serve_stats(s.segment);
    unsigned workers_asked = 0;
    for (const auto& row : st["rows"])
      if (row.contains("worker") && row["queries_udp"].get<std::uint64_t>() > 0) ++workers_asked;
    CHECK(workers_asked == 2);  // else the test proves nothing about "across workers"
    // Once the two time out (2 s), the name may be asked again: nothing leaked.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK(fast_servfails(s, 2, [](int i) {
            return make_ecs_query(static_cast<std::uint16_t>(120 + i), "ecs.test", 1, 24,
                                  {10, 200, static_cast<std::uint8_t>(i), 0});
          }) == 0);
    CHECK(s.upstream.queries() == static_cast<std::uint64_t>(asked) + 2);
  }
}

TEST_CASE("a full in-flight table gives up its oldest query past the jostle timeout for a new miss",
          "[serve][upstream][flood][timing]") {
  // slow.test. goes to an upstream that never answers; test. to one that does.
  TestUpstream hole;
  hole.set_mode(UpstreamMode::silent);
  Service s;
  s.serve.reset();
  s.start({"--upstream-attempts", "1", "--upstream-timeout-ms", "3000", "--forward-zone",
           "test=127.0.0.1:" + std::to_string(s.upstream.port()), "--forward-zone",
           "slow.test=127.0.0.1:" + std::to_string(hole.port()), "-c",
           write_config("upstream_max_in_flight: 4\nupstream_jostle_timeout_ms: 300\n"
                        "stale:\n  client_timeout_ms: 5000\n")},
          1);
  // Four misses fill the table; a fifth at once is refused (none has waited 300 ms).
  std::vector<std::thread> fill;
  std::atomic<int> fill_servfail_fast{0};
  for (int i = 0; i < 4; ++i)
    fill.emplace_back([&, i] {
      const auto t0 = std::chrono::steady_clock::now();
      const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(200 + i), "f" + std::to_string(i) + ".slow.test", 1),
                                      std::chrono::milliseconds(5000));
      if (r.rcode() == 2 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2000)) ++fill_servfail_fast;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(udp_exchange(s.port, make_query(210, "early.slow.test", 1)).rcode() == 2);
  CHECK(s.total("upstream_overload") == 1);
  // Past the jostle timeout, a miss for a working upstream takes the oldest one's place.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const DnsReply a = udp_exchange(s.port, make_query(211, "a.test", 1), std::chrono::milliseconds(2000));
  REQUIRE(a.answered);
  CHECK(a.rcode() == 0);
  CHECK(a.answers.size() == 2);
  for (auto& t : fill) t.join();
  CHECK(fill_servfail_fast == 1);  // the one given up got SERVFAIL long before its 3 s timeout
  CHECK(s.total("upstream_jostled") == 1);
  CHECK(s.total("upstream_overload") == 1);
}

TEST_CASE("forward zones: the longest zone picks the upstream, which speaks only for its zone, and other names REFUSED",
          "[serve][upstream][zones]") {
  TestUpstream deleg;
  Service s;
  s.serve.reset();
  const std::string main_up = "127.0.0.1:" + std::to_string(s.upstream.port());
  s.start({"--forward-zone", "test=" + main_up, "--forward-zone", "deleg.test.=127.0.0.1:" + std::to_string(deleg.port()),
           "--forward-zone", "cname.test=" + main_up});
  // x.deleg.test. goes to the deleg.test. upstream only.
  const DnsReply referral = udp_exchange(s.port, make_query(1, "x.deleg.test", 1));
  REQUIRE(referral.answered);
  CHECK(deleg.queries() == 1);
  CHECK(s.upstream.queries() == 0);
  // cname.test.'s upstream may not speak for target.test.: the A record is scrubbed.
  const DnsReply chain = udp_exchange(s.port, make_query(2, "cname.test", 1));
  REQUIRE(chain.answered);
  CHECK(chain.count(0, 5) == 1);
  CHECK(chain.count(0, 1) == 0);
  // The test. zone's own names are answered in full.
  const DnsReply a = udp_exchange(s.port, make_query(3, "a.test", 1));
  CHECK(a.answers.size() == 2);
  // No zone holds example.: REFUSED, and nobody is asked.
  const std::uint64_t asked = s.upstream.queries() + deleg.queries();
  const DnsReply outside = udp_exchange(s.port, make_query(4, "www.example", 1));
  REQUIRE(outside.answered);
  CHECK(outside.rcode() == 5);
  CHECK(s.upstream.queries() + deleg.queries() == asked);
}

TEST_CASE("forward zones in YAML: errors name file, line and column", "[serve][config][zones]") {
  const auto ok = dnsarena::workers::load_serve_config(
      write_config("forward_zones:\n  - zone: example.com\n    upstreams: [127.0.0.1:5301, 127.0.0.1:5302]\n"));
  REQUIRE(ok.forward_zones.size() == 1);
  CHECK(ok.forward_zones[0].text == "example.com.");
  CHECK(ok.forward_zones[0].upstreams.size() == 2);
  CHECK_NOTHROW(ok.validate());
  CHECK_THROWS_WITH(dnsarena::workers::load_serve_config(write_config("forward_zones:\n  - zone: example.com\n")),
                    Catch::Contains(":2:5: key 'forward_zones'") && Catch::Contains("no upstreams"));
  CHECK_THROWS_WITH(dnsarena::workers::load_serve_config(write_config("forward_zones:\n  - zone: x\n    servers: []\n")),
                    Catch::Contains("unknown key"));
}

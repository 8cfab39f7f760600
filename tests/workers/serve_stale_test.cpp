// SPDX-License-Identifier: GPL-3.0-or-later
// When the upstream fails, the cache keeps answering: serve-stale with Extended DNS
// Errors (RFC 8767, RFC 8914), the response deadline, the host-wide failure cache
// (RFC 9520) and one upstream query per name per host. Real `dnsarena serve` processes
// on loopback, the test upstream switched to a black hole (UpstreamMode::silent).
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <thread>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr unsigned kEdeStale = 3, kEdeStaleNxdomain = 19, kEdeNoReachableAuthority = 22;

struct Asked {
  DnsReply reply;
  std::chrono::milliseconds took;
};

Asked ask(std::uint16_t port, const std::string& name, std::uint16_t qtype, std::uint16_t edns = 1232,
          std::chrono::milliseconds timeout = 3000ms) {
  static std::atomic<std::uint16_t> id{1};
  const auto t0 = Clock::now();
  DnsReply r = udp_exchange(port, make_query(id++, name, qtype, edns), timeout);
  return {r, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0)};
}

// How many queries for `name` (dotted, any case) the upstream received.
std::size_t upstream_asked(const TestUpstream& up, std::string name) {
  std::size_t n = 0;
  for (std::string got : up.names_received()) {
    std::transform(got.begin(), got.end(), got.begin(), [](unsigned char c) { return std::tolower(c); });
    n += got == name;
  }
  return n;
}

struct Name {
  const char* name;
  std::uint16_t qtype;
  unsigned rcode;
};
const Name kStaleNames[] = {{"a.test", 1, 0}, {"aaaa.test", 28, 0}, {"txt.test", 16, 0}, {"nodata.test", 28, 0},
                       {"gone.test", 1, 3}};

}  // namespace

TEST_CASE("expired entries are answered stale, TTL 30 with EDE 3 or 19, when the upstream is a black hole",
          "[serve][stale][timing]") {
  Service s({"-c", write_config("ttl:\n  ceiling: 1\nstale:\n  client_timeout_ms: 600\n"), "--upstream-attempts", "1"});
  std::size_t answers[std::size(kStaleNames)];
  for (std::size_t i = 0; i < std::size(kStaleNames); ++i) {
    const Asked a = ask(s.port, kStaleNames[i].name, kStaleNames[i].qtype);
    REQUIRE(a.reply.answered);
    REQUIRE(a.reply.rcode() == kStaleNames[i].rcode);
    CHECK(a.reply.ede == -1);
    answers[i] = a.reply.records.size();
    for (const ReplyRecord& rec : a.reply.records) CHECK(rec.ttl <= 1);
  }
  REQUIRE(eventually([&] { return live_cache_entries(s.segment) == 0; }));  // every entry expired (TTL capped at 1 s)
  s.upstream.set_mode(UpstreamMode::silent);
  for (std::size_t i = 0; i < std::size(kStaleNames); ++i) {
    INFO(kStaleNames[i].name);
    const Asked a = ask(s.port, kStaleNames[i].name, kStaleNames[i].qtype);
    REQUIRE(a.reply.answered);
    CHECK(a.took < 1500ms);  // the response deadline (600 ms) at the latest, plus scheduling
    CHECK(a.reply.rcode() == kStaleNames[i].rcode);
    CHECK(a.reply.records.size() == answers[i]);
    for (const ReplyRecord& rec : a.reply.records) CHECK(rec.ttl == 30);
    CHECK(a.reply.ede == static_cast<int>(kStaleNames[i].rcode == 3 ? kEdeStaleNxdomain : kEdeStale));
  }
  // A client without EDNS gets the same stale records, and no OPT to carry an EDE.
  const Asked plain = ask(s.port, "a.test", 1, 0);
  REQUIRE(plain.reply.answered);
  CHECK(plain.reply.rcode() == 0);
  CHECK_FALSE(plain.reply.has_opt);
  CHECK(plain.reply.records.size() == answers[0]);
  CHECK(s.total("stale_answers") >= std::size(kStaleNames) + 1);

  // The upstream back: once the failure window (1 s) ends, fresh answers again.
  s.upstream.set_mode(UpstreamMode::normal);
  bool fresh = false;
  for (int i = 0; i < 40 && !fresh; ++i) {
    const Asked a = ask(s.port, "a.test", 1);
    fresh = a.reply.answered && a.reply.rcode() == 0 && a.reply.ede == -1 && !a.reply.records.empty() &&
            a.reply.records[0].ttl <= 1;
    if (!fresh) std::this_thread::sleep_for(100ms);
  }
  CHECK(fresh);
}

TEST_CASE("with nothing stale, a dead upstream gets SERVFAIL with EDE 22 at query_timeout_ms, not at the client "
          "response timer nor after every attempt",
          "[serve][stale][timing]") {
  // Three attempts of 1, 2 and 4 s would keep the client 7 s; the client response timer
  // (500 ms) finds nothing stale and leaves the client waiting; the query resolution
  // timer (1.5 s) answers it.
  Service s({"-c", write_config("stale:\n  client_timeout_ms: 500\nquery_timeout_ms: 1500\n"), "--upstream-timeout-ms",
             "1000"});
  s.upstream.set_mode(UpstreamMode::silent);
  const Asked a = ask(s.port, "never-cached.test", 1, 1232, 4000ms);
  REQUIRE(a.reply.answered);
  CHECK(a.reply.rcode() == 2);
  CHECK(a.reply.ede == static_cast<int>(kEdeNoReachableAuthority));
  CHECK(a.took >= 1450ms);
  CHECK(a.took < 2500ms);
}

TEST_CASE("a failed name costs no upstream query within its failure window, on every worker, and is asked again "
          "after it",
          "[serve][stale][timing]") {
  Service s({"-c", write_config("failure_cache:\n  min_s: 2\n  max_s: 8\n"), "--upstream-attempts", "1",
             "--upstream-timeout-ms", "1000"});
  s.upstream.set_mode(UpstreamMode::silent);
  const Asked first = ask(s.port, "fails.test", 1);
  REQUIRE(first.reply.answered);
  CHECK(first.reply.rcode() == 2);
  CHECK(first.reply.ede == static_cast<int>(kEdeNoReachableAuthority));
  const std::size_t asked = upstream_asked(s.upstream, "fails.test.");
  CHECK(asked == 1);
  // Ten more, each from its own socket (spread over both workers): none goes upstream.
  for (int i = 0; i < 10; ++i) {
    const Asked a = ask(s.port, "fails.test", 1);
    REQUIRE(a.reply.answered);
    CHECK(a.reply.rcode() == 2);
    CHECK(a.reply.ede == static_cast<int>(kEdeNoReachableAuthority));
    CHECK(a.took < 500ms);  // no upstream attempt (which would take 1,000 ms)
  }
  CHECK(upstream_asked(s.upstream, "fails.test.") == asked);
  CHECK(s.total("failure_cached") >= 10);
  // Another name is not affected.
  s.upstream.set_mode(UpstreamMode::normal);
  CHECK(ask(s.port, "a.test", 1).reply.rcode() == 0);
  // After the window the name is asked again (and now answered); until then each ask is
  // answered from the failure cache.
  Asked again{};
  CHECK(eventually([&] {
    again = ask(s.port, "fails.test", 1);
    return again.reply.answered && again.reply.rcode() != 2;
  }));
  REQUIRE(again.reply.answered);
  CHECK(again.reply.rcode() == 3);  // the test zone's NXDOMAIN for unknown names
  CHECK(upstream_asked(s.upstream, "fails.test.") == asked + 1);
}

TEST_CASE("one upstream query per name per host: clients of both workers wait for the one query in flight",
          "[serve][stale][timing]") {
  // The first query for a name is dropped: the query in flight lives 300 ms until its
  // retry is answered. Clients asking meanwhile, on either worker, must not ask again.
  Service s({"--upstream-attempts", "2", "--upstream-timeout-ms", "300"});
  s.upstream.set_mode(UpstreamMode::drop_first);
  constexpr int kClients = 40;
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(i * 3));  // all within the first 120 ms
      const DnsReply r = udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), "aaaa.test", 28), 2000ms);
      if (r.answered && r.rcode() == 0 && !r.records.empty()) ++answered;
    });
  }
  for (auto& c : clients) c.join();
  CHECK(answered == kClients);
  // The dropped first query and its retry; a second worker asking on its own would add one.
  CHECK(upstream_asked(s.upstream, "aaaa.test.") == 2);
  CHECK(s.total("upstream_joined") >= 1);
}

TEST_CASE("answer_first: an expired entry is answered stale at once and refreshed in the background",
          "[serve][stale][timing]") {
  Service s({"-c", write_config("ttl:\n  ceiling: 1\nstale:\n  answer_first: true\n")}, 1);
  REQUIRE(ask(s.port, "txt.test", 16).reply.rcode() == 0);
  REQUIRE(eventually([&] { return live_cache_entries(s.segment) == 0; }));  // expired (TTL capped at 1 s)
  const std::size_t before = upstream_asked(s.upstream, "txt.test.");
  const Asked stale = ask(s.port, "txt.test", 16);
  REQUIRE(stale.reply.answered);
  CHECK(stale.reply.ede == static_cast<int>(kEdeStale));
  CHECK(stale.took < 1000ms);  // not at the response deadline (1,800 ms) after a silent upstream
  // The refresh went upstream, and its answer replaced the entry.
  bool fresh = false;
  for (int i = 0; i < 20 && !fresh; ++i) {
    std::this_thread::sleep_for(50ms);
    const Asked a = ask(s.port, "txt.test", 16);
    fresh = a.reply.answered && a.reply.ede == -1 && !a.reply.records.empty() && a.reply.records[0].ttl <= 1;
  }
  CHECK(fresh);
  CHECK(upstream_asked(s.upstream, "txt.test.") > before);
}

TEST_CASE("prefetch: hits in the last part of a TTL refresh the entry once per host, before it expires",
          "[serve][stale][prefetch][timing]") {
  // TTLs capped at 10 s, prefetch in the last 50%: a hit 5.5 s after the fill refreshes.
  Service s({"-c", write_config("ttl:\n  ceiling: 10\nprefetch:\n  percent: 50\n")});
  const auto filled_at = Clock::now();
  REQUIRE(ask(s.port, "aaaa.test", 28).reply.rcode() == 0);
  const std::size_t filled = upstream_asked(s.upstream, "aaaa.test.");
  for (int i = 0; i < 10; ++i) REQUIRE(ask(s.port, "aaaa.test", 28).reply.rcode() == 0);  // early hits: no refresh
  CHECK(upstream_asked(s.upstream, "aaaa.test.") == filled);
  // Wait (asking) until an answer's TTL is at most half of 10 s: that hit is within the
  // prefetch window (whole seconds, bound inclusive) and starts the refresh.
  std::uint32_t ttl_left = 10;
  for (int i = 0; i < 60 && ttl_left > 5; ++i) {
    std::this_thread::sleep_for(200ms);
    const Asked a = ask(s.port, "aaaa.test", 28);
    REQUIRE(a.reply.answered);
    REQUIRE_FALSE(a.reply.records.empty());
    ttl_left = a.reply.records[0].ttl;
  }
  REQUIRE(ttl_left <= 5);
  // Twenty more hits from their own sockets (both workers): answered from the cache at
  // once, no second refresh.
  for (int i = 0; i < 20; ++i) {
    const Asked a = ask(s.port, "aaaa.test", 28);
    REQUIRE(a.reply.answered);
    CHECK(a.reply.rcode() == 0);
    CHECK(a.took < 1000ms);
  }
  // The refresh started on a hit already answered: its query reaches the upstream.
  CHECK(eventually([&] { return upstream_asked(s.upstream, "aaaa.test.") > filled; }));
  CHECK(upstream_asked(s.upstream, "aaaa.test.") == filled + 1);
  CHECK(s.total("prefetches") == 1);
  // The refreshed entry carries a full TTL again, so the name never expires in front of
  // a client: past the first fill's expiry it is still a hit. (The clock is what is tested
  // here: the wait is for that expiry, 10 s after the fill, plus a second of rounding.)
  std::this_thread::sleep_until(filled_at + 11s);
  const std::uint64_t misses = s.total("misses");
  const Asked late = ask(s.port, "aaaa.test", 28);
  REQUIRE(late.reply.answered);
  REQUIRE_FALSE(late.reply.records.empty());
  CHECK(late.reply.records[0].ttl > 0);
  CHECK(s.total("misses") == misses);
}

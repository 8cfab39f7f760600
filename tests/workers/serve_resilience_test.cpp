// SPDX-License-Identifier: GPL-3.0-or-later
// A killed worker is restarted and the cache stays warm; a restarted service too;
// malformed packets get FORMERR or nothing, and change nothing.
#include <signal.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <thread>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {
const std::vector<std::pair<std::string, std::uint16_t>> kNames = {
    {"a.test", 1}, {"aaaa.test", 28}, {"txt.test", 16}, {"cname.test", 1}, {"gone.test", 1}, {"nodata.test", 28}};

// Sends n queries for a.test. at once, each from its own socket (source port); returns
// how many got NOERROR within `timeout`.
int answered_at_once(std::uint16_t port, int n, std::chrono::milliseconds timeout) {
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int i = 0; i < n; ++i)
    clients.emplace_back([&, i] {
      const DnsReply r = udp_exchange(port, make_query(static_cast<std::uint16_t>(i), "a.test", 1), timeout);
      if (r.answered && r.rcode() == 0) ++answered;
    });
  for (auto& c : clients) c.join();
  return answered;
}

void ask_all(std::uint16_t port) {
  for (const auto& [name, type] : kNames) {
    const DnsReply r = udp_exchange(port, make_query(42, name, type));
    REQUIRE(r.answered);
    CHECK(r.rcode() != 2);
  }
}
}  // namespace

TEST_CASE("kill -9 of a worker: restarted, answers still come from the cache", "[serve][kill]") {
  Service s;
  ask_all(s.port);
  const std::uint64_t upstream = s.upstream.queries();
  REQUIRE(upstream == kNames.size());
  const auto before = s.serve->children();
  REQUIRE(before.size() == 2);
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  // The supervisor notices, counts a restart, forks a new worker.
  bool restarted = false;
  for (int i = 0; i < 100 && !restarted; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = s.serve->children();
    restarted = now.size() == 2 && std::find(now.begin(), now.end(), before[0]) == now.end();
  }
  REQUIRE(restarted);
  CHECK(s.total("restarts") == 1);
  CHECK(s.serve->log().find("killed by signal 9") != std::string::npos);
  // Many rounds so both workers (the new one included) answer.
  for (int round = 0; round < 10; ++round) ask_all(s.port);
  CHECK(s.upstream.queries() == upstream);
  const auto stats = serve_stats(s.segment);
  unsigned workers_answering = 0;
  for (const auto& row : stats["rows"])
    if (row.contains("worker") && row["queries"].get<std::uint64_t>() > 0) ++workers_answering;
  CHECK(workers_answering == 2);
}

TEST_CASE("stop and start the whole service: the cache is still warm", "[serve][restart]") {
  Service s;
  ask_all(s.port);
  const std::uint64_t upstream = s.upstream.queries();
  CHECK(s.serve->stop() == 0);
  CHECK(s.serve->log().find("kept with") != std::string::npos);
  s.start();
  CHECK(s.serve->log().find("re-attached (warm)") != std::string::npos);
  ask_all(s.port);
  CHECK(s.upstream.queries() == upstream);
}

TEST_CASE("malformed packets: FORMERR or dropped, workers keep serving, nothing cached", "[serve][malformed]") {
  Service s;
  const std::uint64_t entries_before = serve_stats(s.segment)["entries"].get<std::uint64_t>();
  std::vector<std::vector<std::uint8_t>> bad;
  // Random bytes (seeded), several lengths.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 50; ++i) {
    std::vector<std::uint8_t> p(static_cast<std::size_t>(1 + (i * 37) % 300));
    for (auto& b : p) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<std::uint8_t>(x);
    }
    if (p.size() > 2) p[2] &= 0x7F;  // a query, not a response: the parser must reject the rest
    bad.push_back(p);
  }
  bad.push_back({0x12, 0x34, 0x01, 0x00, 0x00});                               // truncated header
  bad.push_back({0x12, 0x35, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0, 12, 0, 1, 0, 1});  // pointer loop
  bad.push_back({0x12, 0x36, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 'a', 0, 0, 1, 0, 1});  // huge counts
  auto status = make_query(0x1237, "a.test", 1);
  status[2] = 0x10;  // opcode 2 (STATUS)
  bad.push_back(status);
  auto truncated_question = make_query(0x1238, "a.test", 1, 0);
  truncated_question.resize(truncated_question.size() - 3);
  bad.push_back(truncated_question);

  unsigned answered = 0;
  for (const auto& p : bad) {
    const DnsReply r = udp_exchange(s.port, p, std::chrono::milliseconds(100));
    if (!r.answered) continue;
    ++answered;
    INFO("reply rcode " << r.rcode());
    CHECK((r.rcode() == 1 || r.rcode() == 4));  // FORMERR or NOTIMP (wrong opcode)
    CHECK(r.answers.empty());
  }
  CHECK(answered > 0);
  // Over TCP too.
  const DnsReply t = tcp_exchange(s.port, bad[bad.size() - 4]);
  if (t.answered) CHECK(t.rcode() == 1);
  // Nothing reached the upstream, nothing was cached, and the service still answers.
  CHECK(s.upstream.queries() == 0);
  CHECK(serve_stats(s.segment)["entries"].get<std::uint64_t>() == entries_before);
  CHECK(s.total("formerr") >= bad.size() - 1);
  CHECK(s.serve->children().size() == 2);
  CHECK(s.total("restarts") == 0);
  const DnsReply ok = udp_exchange(s.port, make_query(1, "a.test", 1));
  REQUIRE(ok.answered);
  CHECK(ok.answers.size() == 2);
}

TEST_CASE("a killed worker's queue survives: queries sent while it is down are answered by its replacement",
          "[serve][kill]") {
  Service s({}, 1);  // one worker: while it is dead, nobody else could take its share
  ask_all(s.port);
  const auto before = s.serve->children();
  REQUIRE(before.size() == 1);
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  // Sent at once, before the supervisor has even noticed: they wait in the socket the
  // supervisor keeps open, and the new worker answers them (backoff 100 ms).
  CHECK(answered_at_once(s.port, 20, std::chrono::milliseconds(3000)) == 20);
}

TEST_CASE("a stopped worker (SIGSTOP) is noticed by its heartbeat, killed and replaced, and its share is answered",
          "[serve][kill][heartbeat][timing]") {
  Service s({"-c", write_config("restart:\n  heartbeat_timeout_ms: 1000\n")}, 2);
  ask_all(s.port);
  const auto before = s.serve->children();
  REQUIRE(before.size() == 2);
  REQUIRE(::kill(before[0], SIGSTOP) == 0);
  // From 40 source ports, so SO_REUSEPORT sends about half to the stopped worker.
  const auto t0 = std::chrono::steady_clock::now();
  const int answered = answered_at_once(s.port, 40, std::chrono::milliseconds(4000));
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("answered by " << seconds << " s");
  CHECK(answered == 40);
  CHECK(s.serve->log().find("stopped answering") != std::string::npos);
  CHECK(s.total("workers_killed_silent") >= 1);
  const auto after = s.serve->children();
  CHECK(std::find(after.begin(), after.end(), before[0]) == after.end());
}

// SPDX-License-Identifier: GPL-3.0-or-later
// A slow upstream is not a dead one (workers/client_timers.hpp, upstream_client.hpp,
// upstream_health.hpp): a stub that waits 5 s gets the answer of an upstream that takes
// 1.2, 2.5 or 4 s when nothing stale is held; a stale answer goes out at the client
// response timer when one is; a reply to an earlier attempt is an answer; slow names do
// not take down a server that answers the others; and when the zone's only upstream is
// down, a miss is still asked of it. The test upstream holds back the replies of names
// whose first label is slow<N> or once<N> (test_upstream.hpp) without holding back others.
#include <dirent.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kEdeStale = 3;

struct Asked {
  DnsReply reply;
  std::chrono::milliseconds took{0};
};

// One query, as a stub that waits `wait` for the reply.
Asked ask(std::uint16_t port, const std::string& name, std::chrono::milliseconds wait = 5000ms) {
  static std::atomic<std::uint16_t> id{1};
  const auto t0 = Clock::now();
  DnsReply r = udp_exchange(port, make_query(id++, name, 1), wait);
  return {r, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0)};
}

// The names in `names`, asked at once by one stub each.
std::vector<Asked> ask_together(std::uint16_t port, const std::vector<std::string>& names) {
  std::vector<Asked> out(names.size());
  std::vector<std::thread> stubs;
  for (std::size_t i = 0; i < names.size(); ++i) stubs.emplace_back([&, i] { out[i] = ask(port, names[i]); });
  for (std::thread& t : stubs) t.join();
  return out;
}

// Queries for `name` (dotted, any case) the upstream received.
std::size_t upstream_asked(const TestUpstream& up, const std::string& name) {
  std::size_t n = 0;
  for (std::string got : up.names_received()) {
    std::transform(got.begin(), got.end(), got.begin(), [](unsigned char c) { return std::tolower(c); });
    n += got == name;
  }
  return n;
}

bool answered_a(const Asked& a) {
  return a.reply.answered && a.reply.rcode() == 0 && a.reply.count(0, 1) == 1;
}

std::string at(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

std::string upstream_state(const std::string& segment, std::uint16_t port) {
  const nlohmann::json j = serve_stats(segment);
  if (j.contains("upstreams"))
    for (const auto& u : j["upstreams"])
      if (u["upstream"] == at(port)) return u["state"].get<std::string>();
  return "";
}

// Sockets open in process `pid` (listeners included).
int sockets_open(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    char target[64] = {};
    const std::string link = dir + "/" + e->d_name;
    if (::readlink(link.c_str(), target, sizeof target - 1) > 0 && std::string(target).starts_with("socket:")) ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

TEST_CASE("an upstream that answers after 1.2, 2.5 and 4 s, nothing stale: a stub waiting 5 s gets every answer",
          "[serve][upstream][slow][timing]") {
  // Attempts wait 1, 2 and 4 s (the defaults: 7 s in all): every answer is the first
  // attempt's, taken late; the client response timer (1.8 s) passes with nothing stale
  // for the two slower ones, and they keep waiting.
  Service s({"--upstream-timeout-ms", "1000"});
  const std::vector<std::string> names = {"slow1200a.host.test", "slow2500a.host.test", "slow4000a.host.test"};
  const std::vector<Asked> got = ask_together(s.port, names);
  const int delays[] = {1200, 2500, 4000};
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i] << ": rcode " << got[i].reply.rcode() << ", " << got[i].took.count() << " ms");
    CHECK(answered_a(got[i]));
    CHECK(got[i].took >= std::chrono::milliseconds(delays[i] - 50));
    CHECK(got[i].took < std::chrono::milliseconds(delays[i] + 800));
  }
  CHECK(s.total("deadline_answers") == 0);
  CHECK(s.total("servfail") == 0);
}

TEST_CASE("a stale entry and a slow upstream: the stale answer goes out at the client response timer",
          "[serve][upstream][slow][stale][timing]") {
  Service s({"-c", write_config("ttl:\n  ceiling: 1\nstale:\n  client_timeout_ms: 500\n")});
  const std::string name = "slow1200s.host.test";
  REQUIRE(answered_a(ask(s.port, name)));  // cached for 1 s
  std::this_thread::sleep_for(1100ms);      // expired: only a stale answer is held now
  const Asked a = ask(s.port, name);
  REQUIRE(a.reply.answered);
  CHECK(a.reply.rcode() == 0);
  CHECK(a.reply.ede == kEdeStale);
  REQUIRE(!a.reply.records.empty());
  CHECK(a.reply.records[0].ttl == 30);
  CHECK(a.took >= 450ms);
  CHECK(a.took < 1100ms);  // before the upstream's answer (1.2 s)
}

TEST_CASE("stale.max_age_s 0: the client response timer does not cut the query short",
          "[serve][upstream][slow][stale][timing]") {
  Service s({"-c", write_config("stale:\n  max_age_s: 0\n  client_timeout_ms: 500\n")});
  const Asked a = ask(s.port, "slow1200m.host.test");
  INFO("rcode " << a.reply.rcode() << ", " << a.took.count() << " ms");
  CHECK(answered_a(a));
  CHECK(a.took >= 1150ms);
}

TEST_CASE("a reply to the first attempt that comes after the second was sent is the answer",
          "[serve][upstream][slow][timing]") {
  // once<N>: the first query for the name is answered after 1 s, later ones never; the
  // attempts wait 300, 600 and 1,200 ms, so two more were sent by then.
  Service s;
  const Asked a = ask(s.port, "once1000late.host.test");
  INFO("rcode " << a.reply.rcode() << ", " << a.took.count() << " ms");
  CHECK(answered_a(a));
  CHECK(a.took >= 950ms);
  CHECK(upstream_asked(s.upstream, "once1000late.host.test.") >= 2);
}

TEST_CASE("14 slow names then 20 fast ones on one upstream: the slow ones answered, then every fast one",
          "[serve][upstream][slow][health][timing]") {
  // The upstream's defaults (1 s first attempt): the slow names' first attempts all time
  // out together, which used to mark the only upstream down and fail every miss after.
  Service s({"--upstream-timeout-ms", "1000"});
  std::vector<std::string> slow;
  const char* delays[] = {"1200", "2500", "4000"};
  for (int i = 0; i < 14; ++i) slow.push_back("slow" + std::string(delays[i % 3]) + "n" + std::to_string(i) + ".host.test");
  const std::vector<Asked> got = ask_together(s.port, slow);
  int slow_answered = 0;
  for (const Asked& a : got) slow_answered += answered_a(a);
  CHECK(slow_answered == 14);
  int fast_answered = 0;
  std::string failed;
  for (int i = 0; i < 20; ++i) {
    const Asked a = ask(s.port, "fast" + std::to_string(i) + ".host.test", 2000ms);
    if (answered_a(a)) ++fast_answered;
    else failed += " fast" + std::to_string(i) + " (rcode " + std::to_string(a.reply.rcode()) + ", " +
                   std::to_string(a.took.count()) + " ms)";
  }
  INFO("not answered:" << failed);
  CHECK(fast_answered == 20);
}

TEST_CASE("the zone's only upstream marked down after answering: a miss still goes to it, and brings it up",
          "[serve][upstream][health][timing]") {
  // Names it never answers in time (slow60000...) take it down: three attempts with no
  // reply within their RTO window. The probes wait 5 s, so what answers the next miss is
  // the last resort, not a probe.
  Service s({"--upstream-attempts", "1", "-c",
             write_config("upstream_health: {down_backoff_initial_ms: 5000, down_backoff_max_ms: 5000}\n")},
            1);
  REQUIRE(answered_a(ask(s.port, "before.host.test")));
  std::this_thread::sleep_for(500ms);  // past the RTO window of that reply
  std::vector<std::thread> holes;
  for (int i = 0; i < 3; ++i)
    holes.emplace_back([&, i] { ask(s.port, "slow60000h" + std::to_string(i) + ".host.test", 4000ms); });
  bool down = false;
  for (int i = 0; i < 40 && !down; ++i) {
    down = upstream_state(s.segment, s.upstream.port()) == "down";
    if (!down) std::this_thread::sleep_for(100ms);
  }
  REQUIRE(down);
  const Asked a = ask(s.port, "after.host.test", 2000ms);
  INFO("rcode " << a.reply.rcode() << ", " << a.took.count() << " ms");
  CHECK(answered_a(a));
  CHECK(a.took < 500ms);
  CHECK(s.serve->log().find("is back: it answered a query") != std::string::npos);
  for (std::thread& t : holes) t.join();
}

TEST_CASE("clients parked on another worker's slow query wait for its answer too, nothing stale",
          "[serve][upstream][slow][timing]") {
  // 20 clients at once, each from its own port, so both workers get some: one worker asks,
  // the other's clients park on its claim. The response timer (500 ms) finds nothing stale.
  Service s({"-c", write_config("stale:\n  client_timeout_ms: 500\n")});
  const std::vector<std::string> names(20, "slow1500p.host.test");
  const std::vector<Asked> got = ask_together(s.port, names);
  int answered = 0;
  for (const Asked& a : got) answered += answered_a(a) && a.took >= 1400ms;
  CHECK(answered == 20);
  CHECK(upstream_asked(s.upstream, "slow1500p.host.test.") <= 3);  // one query (its attempts): not one per worker
  CHECK(s.total("upstream_joined") >= 1);
  CHECK(s.total("deadline_answers") == 0);
}

TEST_CASE("earlier attempts' sockets are kept for late replies within upstream_max_in_flight",
          "[serve][upstream][slow][descriptors][timing]") {
  // Two misses to a silent upstream, attempts 300, 600 and 1,200 ms, four sockets allowed:
  // each keeps its first attempt's socket while the second is out (four in all), and
  // no more after that.
  Service s({"-c", write_config("upstream_max_in_flight: 4\n")}, 1);
  s.upstream.set_mode(UpstreamMode::silent);
  REQUIRE(s.serve->children().size() == 1);
  const pid_t worker = s.serve->children()[0];
  const int before = sockets_open(worker);
  REQUIRE(before > 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < 2; ++i) clients.emplace_back([&, i] { ask(s.port, "kept" + std::to_string(i) + ".test", 3000ms); });
  int most = 0;
  for (int i = 0; i < 100; ++i) {
    most = std::max(most, sockets_open(worker) - before);
    std::this_thread::sleep_for(15ms);
  }
  for (std::thread& t : clients) t.join();
  CHECK(most >= 3);  // a kept socket beside the two current attempts
  CHECK(most <= 4);  // the bound
  CHECK(sockets_open(worker) == before);  // all closed when the queries ended
}

TEST_CASE("clients waiting on a worker's queries are bounded: past 64 per in-flight slot a miss is answered at once",
          "[serve][upstream][slow][flood][timing]") {
  // upstream_max_in_flight 1: 64 clients may wait. 100 ask one slow name at once: 64 get
  // its answer, the rest SERVFAIL at once (nothing stale), counted as overload.
  Service s({"-c", write_config("upstream_max_in_flight: 1\n")}, 1);
  const std::vector<std::string> names(100, "slow1000w.host.test");
  const std::vector<Asked> got = ask_together(s.port, names);
  int answered = 0, refused_fast = 0;
  for (const Asked& a : got) {
    answered += answered_a(a);
    refused_fast += a.reply.answered && a.reply.rcode() == 2 && a.took < 500ms;
  }
  CHECK(answered == 64);
  CHECK(refused_fast == 36);
  CHECK(s.total("upstream_overload") == 36);
}

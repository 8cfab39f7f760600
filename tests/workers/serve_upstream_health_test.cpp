// SPDX-License-Identifier: GPL-3.0-or-later
// Upstream health across the workers (workers/upstream_health.hpp): with two upstreams of
// which the first is black-holed, misses stop waiting on it once it is known down, it
// gets only probes (the root's SOA), a worker killed with -9 is replaced by one that
// keeps skipping it, so do the workers a SIGHUP reload forks, it is used again once it
// answers, and when every upstream is down a miss fails at once.
#include <signal.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string at(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// The upstream's row of `dnsarena stats --json` (published once a second by the
// supervisor); null before the first snapshot.
nlohmann::json upstream_row(const std::string& segment, std::uint16_t port) {
  const nlohmann::json j = serve_stats(segment);
  if (j.contains("upstreams"))
    for (const auto& u : j["upstreams"])
      if (u["upstream"] == at(port)) return u;
  return nullptr;
}

bool wait_state(const std::string& segment, std::uint16_t port, const std::string& state,
                std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  for (;;) {
    const nlohmann::json row = upstream_row(segment, port);
    if (!row.is_null() && row["state"] == state) return true;
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Queries the upstream received for names other than the root (the root's SOA is what
// a probe asks): the misses sent to it.
std::size_t misses_received(const TestUpstream& u) {
  const auto names = u.names_received();
  return static_cast<std::size_t>(std::count_if(names.begin(), names.end(), [](const std::string& n) { return !n.empty(); }));
}
std::size_t probes_received(const TestUpstream& u) { return u.names_received().size() - misses_received(u); }

// One miss (a fresh name: NXDOMAIN from a live upstream); its reply and time.
struct Miss {
  DnsReply reply;
  double ms = 0;
};
Miss miss(std::uint16_t port, const std::string& name) {
  const auto t0 = Clock::now();
  Miss m;
  m.reply = udp_exchange(port, make_query(0x4242, name, 1), std::chrono::milliseconds(5000));
  m.ms = ms_since(t0);
  return m;
}

// Sends misses one at a time until `dead` is down in the stats: each is answered (by the
// live upstream, after a timeout when it tried the dead one first). Returns how many.
int misses_until_down(std::uint16_t port, const std::string& segment, std::uint16_t dead, const std::string& tag) {
  for (int i = 0; i < 80; ++i) {
    const Miss m = miss(port, "warm" + std::to_string(i) + "." + tag + ".test");
    REQUIRE(m.reply.answered);
    CHECK(m.reply.rcode() == 3);
    const nlohmann::json row = upstream_row(segment, dead);
    if (!row.is_null() && row["state"] == "down") return i + 1;
    if (i >= 20) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the snapshot's second
  }
  FAIL("the silent upstream was never marked down");
  return -1;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// The live upstream's own round trip, asked directly (median of 21).
double direct_rtt_ms(std::uint16_t upstream) {
  std::vector<double> t;
  for (int i = 0; i < 21; ++i) {
    const auto t0 = Clock::now();
    REQUIRE(udp_exchange(upstream, make_query(7, "rtt" + std::to_string(i) + ".test", 1)).answered);
    t.push_back(ms_since(t0));
  }
  return percentile(t, 0.5);
}

}  // namespace

TEST_CASE("two upstreams, the first silent: once it is down, misses take the live one's round trip and it gets "
          "only probes",
          "[serve][upstream][health][timing]") {
  TestUpstream live;
  live.set_delay(std::chrono::milliseconds(5));  // a distant server: its RTT is what misses should cost
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  s.start({"--upstream", at(s.upstream.port()), "--upstream", at(live.port())});
  const int warm = misses_until_down(s.port, s.segment, s.upstream.port(), "p99");
  const std::size_t dead_misses = misses_received(s.upstream);
  CHECK(dead_misses >= 3);  // down_after_timeouts
  const nlohmann::json before = serve_stats(s.segment)["total"];
  const std::size_t probes_before = probes_received(s.upstream);
  // Rounds of 200 sequential misses, each against the live one's round trip measured
  // just before it; the target is met when one round meets it (a loaded machine adds
  // scheduling delays to some rounds that have nothing to do with the upstreams). What
  // must hold in every round: no miss waits anywhere near the dead one's 300 ms timeout.
  const auto t0 = Clock::now();
  bool met = false;
  std::string rounds;
  for (int round = 0; round < 3 && !met; ++round) {
    const double rtt = direct_rtt_ms(live.port());
    std::vector<double> ms;
    for (int i = 0; i < 200; ++i) {
      const Miss m = miss(s.port, "n" + std::to_string(i) + "r" + std::to_string(round) + ".p99.test");
      REQUIRE(m.reply.answered);
      CHECK(m.reply.rcode() == 3);
      ms.push_back(m.ms);
    }
    const double p99 = percentile(ms, 0.99);
    met = p99 <= 2 * rtt + 1.0;
    rounds += "\n  round " + std::to_string(round) + ": live RTT " + std::to_string(rtt) + " ms, misses p50 " +
              std::to_string(percentile(ms, 0.5)) + " ms, p99 " + std::to_string(p99) + " ms, max " +
              std::to_string(*std::max_element(ms.begin(), ms.end())) + " ms (target p99 <= " +
              std::to_string(2 * rtt + 1) + ")";
    CHECK(*std::max_element(ms.begin(), ms.end()) < 150);
  }
  const double elapsed_s = ms_since(t0) / 1000;
  WARN("misses until the silent upstream was down: " << warm << "; then" << rounds);
  CHECK(met);
  // The dead upstream got no miss, only probes: one per interval (1 s, then 2 s...) at most.
  std::string names;
  for (const std::string& n : s.upstream.names_received()) names += " [" + n + "]";
  INFO("names the silent upstream received:" << names);
  CHECK(misses_received(s.upstream) == dead_misses);
  CHECK(probes_received(s.upstream) - probes_before <= 1 + static_cast<std::size_t>(elapsed_s));
  const nlohmann::json after = serve_stats(s.segment)["total"];
  CHECK(after["upstream_timeouts"] == before["upstream_timeouts"]);
  CHECK(after["upstream_down_skips"].get<std::uint64_t>() >= before["upstream_down_skips"].get<std::uint64_t>() + 200);
  CHECK(s.serve->log().find("upstream " + at(s.upstream.port()) + " is down") != std::string::npos);
  // What stats shows of it.
  const nlohmann::json dead = upstream_row(s.segment, s.upstream.port());
  CHECK(dead["state"] == "down");
  CHECK(dead["srtt_ms"].is_null());
  CHECK(dead["downs"] == 1);
  CHECK(dead["timeouts"].get<std::uint64_t>() >= 3);
  const nlohmann::json up = upstream_row(s.segment, live.port());
  CHECK(up["state"] == "up");
  CHECK(up["srtt_ms"].get<double>() >= 4.0);
  CHECK(up["srtt_ms"].get<double>() <= 50.0);
  CHECK(up["timeouts"] == 0);
}

TEST_CASE("two upstreams, the first silent, from a cold start: no miss waits on it before it is known down (trials "
          "race it against the live one)",
          "[serve][upstream][health][timing]") {
  TestUpstream live;
  live.set_delay(std::chrono::milliseconds(5));
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  s.start({"--upstream", at(s.upstream.port()), "--upstream", at(live.port())}, 1);
  // Neither upstream has answered yet: each is unproven, so every miss is raced.
  std::vector<double> ms;
  bool down = false;
  for (int i = 0; i < 200 && !down; ++i) {
    const Miss m = miss(s.port, "cold" + std::to_string(i) + ".trial.test");
    REQUIRE(m.reply.answered);
    CHECK(m.reply.rcode() == 3);
    ms.push_back(m.ms);
    const nlohmann::json row = upstream_row(s.segment, s.upstream.port());
    down = !row.is_null() && row["state"] == "down";
    if (i >= 20) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the snapshot's second
  }
  REQUIRE(down);
  WARN(ms.size() << " misses until the silent upstream was down: p50 " << percentile(ms, 0.5) << " ms, max "
                 << *std::max_element(ms.begin(), ms.end()) << " ms");
  // The silent one's unknown RTO is 376 ms: a miss that waited on it would take that long.
  CHECK(*std::max_element(ms.begin(), ms.end()) < 200);
  // It was found down by trials (copies of misses nobody waited on), within the bound of
  // down_after_timeouts (3) in flight per worker at once.
  const nlohmann::json totals = serve_stats(s.segment)["total"];
  CHECK(totals["upstream_trials"].get<std::uint64_t>() >= 3);
  CHECK(misses_received(s.upstream) >= 3);
  CHECK(totals["upstream_timeouts"] == 0);  // no client's query timed out
  const nlohmann::json dead = upstream_row(s.segment, s.upstream.port());
  CHECK(dead["timeouts"].get<std::uint64_t>() >= 3);
  // Once down, a miss costs it nothing more: no trial, no query.
  const std::size_t dead_misses = misses_received(s.upstream);
  const std::uint64_t trials = totals["upstream_trials"].get<std::uint64_t>();
  for (int i = 0; i < 20; ++i) REQUIRE(miss(s.port, "after" + std::to_string(i) + ".trial.test").reply.answered);
  CHECK(misses_received(s.upstream) == dead_misses);
  CHECK(serve_stats(s.segment)["total"]["upstream_trials"].get<std::uint64_t>() == trials);
}

TEST_CASE("kill -9 of a worker: its replacement keeps skipping the down upstream (no new timeouts)",
          "[serve][upstream][health][kill]") {
  TestUpstream live;
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  s.start({"--upstream", at(s.upstream.port()), "--upstream", at(live.port())}, 1);
  misses_until_down(s.port, s.segment, s.upstream.port(), "kill");
  const auto before = s.serve->children();
  REQUIRE(before.size() == 1);
  REQUIRE(::kill(before[0], SIGKILL) == 0);
  bool restarted = false;
  for (int i = 0; i < 100 && !restarted; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = s.serve->children();
    restarted = now.size() == 1 && now[0] != before[0];
  }
  REQUIRE(restarted);
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  const std::uint64_t timeouts = s.total("upstream_timeouts");
  const std::size_t dead_misses = misses_received(s.upstream);
  for (int i = 0; i < 40; ++i) {
    const Miss m = miss(s.port, "after" + std::to_string(i) + ".kill.test");
    REQUIRE(m.reply.answered);
    CHECK(m.reply.rcode() == 3);
    CHECK(m.ms < 100);  // never the 300 ms timeout of the dead one
  }
  CHECK(s.total("upstream_timeouts") == timeouts);
  CHECK(misses_received(s.upstream) == dead_misses);
}

TEST_CASE("a down upstream that answers again is found by a probe and gets misses again",
          "[serve][upstream][health][timing]") {
  TestUpstream live;
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  const std::string cfg = write_config("upstream_health: {down_backoff_initial_ms: 200, down_backoff_max_ms: 400}\n");
  s.start({"--config", cfg, "--upstream", at(s.upstream.port()), "--upstream", at(live.port())});
  misses_until_down(s.port, s.segment, s.upstream.port(), "back");
  // Down for a while: probes (one per 200-400 ms), no misses.
  const std::size_t dead_misses = misses_received(s.upstream);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(miss(s.port, "down" + std::to_string(i) + ".back.test").reply.rcode() == 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(misses_received(s.upstream) == dead_misses);
  CHECK(probes_received(s.upstream) >= 1);
  // It answers again: within a probe interval or two the misses are shared again (its
  // RTT from the probe is about the live one's: both within the band).
  s.upstream.set_mode(UpstreamMode::normal);
  bool used = false;
  for (int i = 0; i < 100 && !used; ++i) {
    REQUIRE(miss(s.port, "up" + std::to_string(i) + ".back.test").reply.rcode() == 3);
    used = misses_received(s.upstream) > dead_misses;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(used);
  CHECK(wait_state(s.segment, s.upstream.port(), "up", std::chrono::seconds(3)));
  CHECK(s.serve->log().find("upstream " + at(s.upstream.port()) + " is back") != std::string::npos);
}

TEST_CASE("every upstream of the zone down: a miss fails at once, and a probe finds it back",
          "[serve][upstream][health][timing]") {
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  const std::string cfg = write_config("upstream_health: {down_backoff_initial_ms: 200, down_backoff_max_ms: 400}\n");
  s.start({"--config", cfg}, 1);
  // The first miss tries the one upstream three times (300, 600, 1200 ms): down. Its
  // client is answered at its response deadline (1.8 s) while the query goes on.
  Miss first = miss(s.port, "first.alldown.test");
  REQUIRE(first.reply.answered);
  CHECK(first.reply.rcode() == 2);
  CHECK(first.ms >= 1500);
  REQUIRE(wait_state(s.segment, s.upstream.port(), "down", std::chrono::seconds(3)));
  // Now misses do not wait on it: SERVFAIL at once, counted as skips.
  const std::size_t asked = misses_received(s.upstream);
  for (int i = 0; i < 5; ++i) {
    const Miss m = miss(s.port, "fast" + std::to_string(i) + ".alldown.test");
    REQUIRE(m.reply.answered);
    CHECK(m.reply.rcode() == 2);
    CHECK(m.ms < 50);
  }
  CHECK(misses_received(s.upstream) == asked);
  CHECK(s.total("upstream_down_skips") >= 5);
  // Probes go on (a miss after the interval sends one); once it answers, misses do too.
  s.upstream.set_mode(UpstreamMode::normal);
  bool answered = false;
  const auto t0 = Clock::now();
  for (int i = 0; i < 60 && !answered; ++i) {
    answered = miss(s.port, "again" + std::to_string(i) + ".alldown.test").reply.rcode() == 3;
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(answered);
  CHECK(ms_since(t0) < 1500);  // within a probe interval or two (200, 400 ms)
  CHECK(probes_received(s.upstream) >= 1);
  CHECK(s.total("upstream_probes") >= 1);
}

TEST_CASE("SIGHUP reload: the new workers keep what was learned, and an added upstream gets a row and misses",
          "[serve][upstream][health][reload]") {
  TestUpstream live, added;
  Service s;
  s.serve.reset();
  s.upstream.set_mode(UpstreamMode::silent);
  const std::string path = write_config("upstreams: [" + at(s.upstream.port()) + ", " + at(live.port()) + "]\n");
  // An unrelated forward zone keeps the fixture from adding --upstream, which would
  // replace the file's list at every reload too.
  s.start({"--config", path, "--forward-zone", "example.=" + at(free_port())});
  misses_until_down(s.port, s.segment, s.upstream.port(), "reload");
  const auto pids_before = s.serve->children();
  std::ofstream(path) << "upstreams: [" + at(s.upstream.port()) + ", " + at(live.port()) + ", " + at(added.port()) +
                             "]\n";
  REQUIRE(::kill(s.serve->pid(), SIGHUP) == 0);
  bool reloaded = false;
  for (int i = 0; i < 200 && !reloaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    reloaded = s.serve->log().find("reloaded: 2 workers replaced") != std::string::npos;
  }
  REQUIRE(reloaded);
  const std::uint64_t timeouts = s.total("upstream_timeouts");
  const std::size_t dead_misses = misses_received(s.upstream);
  for (int i = 0; i < 60; ++i) {
    const Miss m = miss(s.port, "r" + std::to_string(i) + ".reload.test");
    REQUIRE(m.reply.answered);
    CHECK(m.reply.rcode() == 3);
    CHECK(m.ms < 100);
  }
  for (pid_t p : pids_before) {
    const auto now = s.serve->children();
    CHECK(std::find(now.begin(), now.end(), p) == now.end());
  }
  CHECK(s.total("upstream_timeouts") == timeouts);
  CHECK(misses_received(s.upstream) == dead_misses);
  CHECK(misses_received(added) > 0);  // the new row: unknown rank, within the band
  CHECK(wait_state(s.segment, added.port(), "up", std::chrono::seconds(3)));
  CHECK(upstream_row(s.segment, s.upstream.port())["state"] == "down");
}

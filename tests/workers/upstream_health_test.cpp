// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide upstream health table (workers/upstream_health.hpp): RFC 6298 smoothing
// with the numbers worked out, Unbound's timeout backoff, down after N silent attempts,
// probes one at a time with a doubling interval, a killed prober's token expiring, many
// processes writing one row, and the selection among a zone's upstreams.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <vector>

#include "workers/upstream_health.hpp"

using dnsarena::workers::attempt_timeout_us;
using dnsarena::workers::choose_upstream;
using dnsarena::workers::trial_partner;
using dnsarena::workers::Endpoint;
using dnsarena::workers::UpstreamHealth;
using dnsarena::workers::UpstreamHealthConfig;

namespace {

constexpr std::uint64_t kMs = 1000;
constexpr auto kTimeout = UpstreamHealth::Failure::timeout;
constexpr auto kRefused = UpstreamHealth::Failure::refused;

UpstreamHealthConfig policy(unsigned down_after = 3, unsigned initial_ms = 1000, unsigned max_ms = 8000) {
  UpstreamHealthConfig c;
  c.down_after_timeouts = down_after;
  c.down_backoff_initial_ms = initial_ms;
  c.down_backoff_max_ms = max_ms;
  return c;
}

// Marks `row` down at `now` with `n` silent timeouts.
void take_down(UpstreamHealth& h, unsigned row, std::uint64_t now, const UpstreamHealthConfig& c) {
  for (unsigned i = 0; i < c.down_after_timeouts; ++i) h.failed(row, kTimeout, now - 1, 0, now, c, true);
  REQUIRE(h.down(row));
}

}  // namespace

TEST_CASE("upstream health: rows are keyed by address and port, IPv4 and IPv6", "[upstream_health]") {
  UpstreamHealth h(3, false);
  CHECK(h.add(Endpoint::parse("192.0.2.1:53")) == 0);
  CHECK(h.add(Endpoint::parse("192.0.2.1:5353")) == 1);
  CHECK(h.add(Endpoint::parse("[2001:db8::1]:53")) == 2);
  CHECK(h.add(Endpoint::parse("192.0.2.1:53")) == 0);  // found, not added again
  CHECK(h.add(Endpoint::parse("192.0.2.2:53")) == -1);  // full
  CHECK(h.size() == 3);
  CHECK(h.find(Endpoint::parse("192.0.2.1:5353")) == 1);
  CHECK(h.find(Endpoint::parse("192.0.2.9:53")) == -1);
  CHECK(h.endpoint_text(0) == "192.0.2.1:53");
  CHECK(h.endpoint_text(2) == "[2001:db8::1]:53");
}

TEST_CASE("upstream health: RTT smoothing is RFC 6298's, and timeouts back the RTO off as Unbound does",
          "[upstream_health]") {
  UpstreamHealth h(1, false);
  const unsigned r = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const auto c = policy();
  // Before any reply: Unbound's 376 ms for rank and RTO alike.
  CHECK(h.rank_us(r) == 376000);
  CHECK(h.rto_us(r) == 376000);
  CHECK_FALSE(h.snapshot(r, 0).sampled);
  // First sample R = 100 ms: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 300 ms.
  h.replied(r, 100000, 1 * kMs);
  auto s = h.snapshot(r, 1 * kMs);
  CHECK(s.sampled);
  CHECK(s.srtt_ms == 100.0);
  CHECK(s.rttvar_ms == 50.0);
  CHECK(h.rto_us(r) == 300000);
  CHECK(h.rank_us(r) == 300000);
  // R = 200 ms: RTTVAR = 50 + (|100 - 200| - 50) / 4 = 62.5, SRTT = 100 + 100 / 8 = 112.5.
  h.replied(r, 200000, 2 * kMs);
  s = h.snapshot(r, 2 * kMs);
  CHECK(s.srtt_ms == 112.5);
  CHECK(s.rttvar_ms == 62.5);
  CHECK(h.rto_us(r) == 112500 + 4 * 62500);
  // R = 20 ms: RTTVAR = 62.5 + (92.5 - 62.5) / 4 = 70, SRTT = 112.5 - 92.5 / 8 (11.5625:
  // 11.562 in integer microseconds).
  h.replied(r, 20000, 3 * kMs);
  s = h.snapshot(r, 3 * kMs);
  CHECK(s.rttvar_ms == 70.0);
  CHECK(s.srtt_ms == 100.938);
  const std::uint32_t rto = h.rto_us(r);
  CHECK(rto == 100938 + 4 * 70000);
  // A timeout doubles the RTO the attempt was sent with (not the current one: several
  // attempts that time out together double it once), and leaves the rank alone.
  h.failed(r, kTimeout, 4 * kMs, rto, 5 * kMs, c, true);
  CHECK(h.rto_us(r) == 2 * rto);
  h.failed(r, kTimeout, 4 * kMs, rto, 5 * kMs, c, true);
  CHECK(h.rto_us(r) == 2 * rto);
  h.failed(r, kTimeout, 6 * kMs, 2 * rto, 7 * kMs, c, true);
  CHECK(h.rto_us(r) == 4 * rto);
  CHECK(h.rank_us(r) == rto);
  // A reply computes it afresh.
  h.replied(r, 100938, 8 * kMs);
  CHECK(h.rto_us(r) < 2 * rto);
  s = h.snapshot(r, 8 * kMs);
  CHECK(s.timeouts == 3);
  CHECK(s.consecutive == 0);
  // The backoff stops at Unbound's 120 s.
  for (int i = 0; i < 20; ++i) h.failed(r, kTimeout, 9 * kMs, h.rto_us(r), 9 * kMs, c, false);
  CHECK(h.rto_us(r) == UpstreamHealth::kMaxRtoUs);
  // A fast server: the RTO is at least 50 ms (Unbound's calc_rto), so a timeout doubles
  // it to 100 ms; the rank is not clamped, so fast servers still rank apart.
  UpstreamHealth f(1, false);
  const unsigned fr = static_cast<unsigned>(f.add(Endpoint::parse("192.0.2.2:53")));
  f.replied(fr, 100, 1 * kMs);
  CHECK(f.rank_us(fr) == 300);
  CHECK(f.rto_us(fr) == 50000);
  f.failed(fr, kTimeout, 2 * kMs, f.rto_us(fr), 3 * kMs, c, true);
  CHECK(f.rto_us(fr) == 100000);
}

TEST_CASE("upstream health: an attempt waits the RTO when shorter than the timeout, at least 50 ms",
          "[upstream_health]") {
  CHECK(attempt_timeout_us(200, 300000) == 50000);       // a fast server: the floor
  CHECK(attempt_timeout_us(120000, 300000) == 120000);   // its RTO
  CHECK(attempt_timeout_us(376000, 300000) == 300000);   // unknown: the configured timeout caps it
  CHECK(attempt_timeout_us(376000, 1000000) == 376000);  // ... or not
  CHECK(attempt_timeout_us(200, 20000) == 20000);        // a timeout below the floor is kept
}

TEST_CASE("upstream health: down after N silent attempts, and a server that replied since is not counted",
          "[upstream_health]") {
  UpstreamHealth h(1, false);
  const unsigned r = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const auto c = policy(3);
  std::uint64_t t = 1000 * kMs;
  CHECK_FALSE(h.failed(r, kTimeout, t - 300 * kMs, 0, t, c, true));
  CHECK_FALSE(h.failed(r, kRefused, t - 1 * kMs, 0, t, c, true));
  CHECK_FALSE(h.down(r));
  // A reply resets the count; a timeout of a query sent before that reply is the name's,
  // not the server's, and does not count either.
  h.replied(r, 1000, t + 1);
  CHECK(h.snapshot(r, t).consecutive == 0);
  for (int i = 0; i < 5; ++i) CHECK_FALSE(h.failed(r, kTimeout, t, 0, t + 300 * kMs, c, true));
  CHECK(h.snapshot(r, t).consecutive == 0);
  // TCP and probe failures count in the totals only.
  for (int i = 0; i < 5; ++i) CHECK_FALSE(h.failed(r, kTimeout, t + 2, 0, t + 300 * kMs, c, false));
  CHECK_FALSE(h.down(r));
  // Three attempts sent after the last reply, none answered: down, once.
  t += 1000 * kMs;
  CHECK_FALSE(h.failed(r, kTimeout, t - 300 * kMs, 0, t, c, true));
  CHECK_FALSE(h.failed(r, kTimeout, t - 300 * kMs, 0, t, c, true));
  CHECK(h.failed(r, kTimeout, t - 300 * kMs, 0, t, c, true));
  CHECK(h.down(r));
  CHECK_FALSE(h.failed(r, kTimeout, t - 300 * kMs, 0, t, c, true));  // already down
  auto s = h.snapshot(r, t + 500 * kMs);
  CHECK(s.down);
  CHECK(s.downs == 1);
  CHECK(s.timeouts == 15);
  CHECK(s.refusals == 1);
  CHECK(s.down_for_s == 0.5);
  CHECK(s.backoff_ms == 1000);
  CHECK(s.next_probe_in_ms == 500.0);
  // Any reply brings it up, once.
  CHECK(h.replied(r, 2000, t + 600 * kMs));
  CHECK_FALSE(h.down(r));
  CHECK_FALSE(h.replied(r, 2000, t + 601 * kMs));
}

TEST_CASE("upstream health: a reply within an attempt's RTO window keeps its timeout from counting toward down",
          "[upstream_health]") {
  // Slow names at a live server: it answered another query shortly before (or while)
  // each attempt was out; those timeouts are the names', however many.
  UpstreamHealth h(1, false);
  const unsigned r = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const auto c = policy(3);
  const std::uint64_t rto = 400 * kMs;
  h.replied(r, 5 * kMs, 10000 * kMs);
  for (int i = 0; i < 10; ++i)  // sent 300 ms after that reply: within one RTO of it
    CHECK_FALSE(h.failed(r, kTimeout, 10300 * kMs, rto, 11300 * kMs, c, true));
  CHECK(h.snapshot(r, 11300 * kMs).consecutive == 0);
  CHECK_FALSE(h.down(r));
  // Sent more than an RTO after the last reply, none answered: a silent server, down
  // after three as before.
  CHECK_FALSE(h.failed(r, kTimeout, 10500 * kMs, rto, 11500 * kMs, c, true));
  CHECK_FALSE(h.failed(r, kTimeout, 10500 * kMs, rto, 11500 * kMs, c, true));
  CHECK(h.failed(r, kTimeout, 10500 * kMs, rto, 11500 * kMs, c, true));
  CHECK(h.down(r));
  // A late reply (to any of them) is a reply: up again, its RTT a real sample.
  CHECK(h.replied(r, 1200 * kMs, 11700 * kMs));
  CHECK_FALSE(h.down(r));
  CHECK(h.rank_us(r) > 100 * kMs);
  CHECK(h.last_reply_us(r) == 11700 * kMs);
}

TEST_CASE("upstream health: one probe at a time, due after the backoff, which doubles up to the max",
          "[upstream_health]") {
  UpstreamHealth h(1, false);
  const unsigned r = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const auto c = policy(3, 1000, 5000);
  CHECK(h.take_probe(r, 0, 600) == 0);  // up: no probe
  std::uint64_t t = 10000 * kMs;
  take_down(h, r, t, c);
  CHECK(h.take_probe(r, t + 999 * kMs, 600) == 0);  // not due
  t += 1000 * kMs;
  const std::uint64_t token = h.take_probe(r, t, 600);
  REQUIRE(token != 0);
  CHECK(h.take_probe(r, t, 600) == 0);  // held
  CHECK(h.take_probe(r, t + 500 * kMs, 600) == 0);
  // Ending a probe with a token that is not the one held changes nothing.
  h.end_probe(r, token ^ 1, UpstreamHealth::ProbeEnd::dead, t, c);
  CHECK(h.take_probe(r, t + 100 * kMs, 600) == 0);
  CHECK(h.snapshot(r, t).backoff_ms == 1000);
  // The holder ends its probe: dead. The interval doubles to 2 s and the token is free.
  t += 300 * kMs;
  h.end_probe(r, token, UpstreamHealth::ProbeEnd::dead, t, c);
  for (const unsigned interval : {2000u, 4000u, 5000u, 5000u}) {
    INFO("interval " << interval);
    CHECK(h.snapshot(r, t).backoff_ms == interval);
    CHECK(h.take_probe(r, t + interval * kMs - 1, 600) == 0);
    t += interval * kMs;
    const std::uint64_t next = h.take_probe(r, t, 600);
    REQUIRE(next != 0);
    t += 300 * kMs;
    h.end_probe(r, next, UpstreamHealth::ProbeEnd::dead, t, c);
  }
  // A probe that gets a reply: the reply brings the row up, the probe gives the token back.
  t += 5000 * kMs;
  const std::uint64_t last = h.take_probe(r, t, 600);
  REQUIRE(last != 0);
  CHECK(h.replied(r, 800, t + 1 * kMs));
  h.end_probe(r, last, UpstreamHealth::ProbeEnd::alive, t + 1 * kMs, c);
  CHECK_FALSE(h.down(r));
  CHECK(h.take_probe(r, t + 10000 * kMs, 600) == 0);  // up: no probes
  // Down again later: the interval starts over at the initial one.
  take_down(h, r, t + 20000 * kMs, c);
  CHECK(h.snapshot(r, t + 20000 * kMs).backoff_ms == 1000);
  CHECK(h.snapshot(r, t).probes == 6);
}

TEST_CASE("upstream health: a killed prober's token expires with its lease", "[upstream_health]") {
  UpstreamHealth h(1, true);
  const unsigned r = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const auto c = policy(1, 1, 1);
  const auto now_us = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000u + static_cast<std::uint64_t>(t.tv_nsec) / 1000u;
  };
  take_down(h, r, now_us() - 10 * kMs, c);  // its first probe is due at once
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {  // a worker that takes the probe (lease 300 ms) and is killed mid-probe
    const char got = h.take_probe(r, now_us(), 300) != 0 ? 1 : 0;
    [[maybe_unused]] const ssize_t w = ::write(ready[1], &got, 1);
    ::pause();
    ::_exit(0);
  }
  char got = 0;
  REQUIRE(::read(ready[0], &got, 1) == 1);
  REQUIRE(got == 1);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const std::uint64_t killed_at = now_us();
  CHECK(h.take_probe(r, now_us(), 300) == 0);  // the dead prober's lease still runs
  std::uint64_t token = 0;
  while (token == 0 && now_us() - killed_at < 2000 * kMs) {
    ::usleep(10000);
    token = h.take_probe(r, now_us(), 300);
  }
  CHECK(token != 0);
  CHECK(now_us() - killed_at >= 250 * kMs);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("upstream health: forked writers share the rows, the totals add up and one of them marks it down",
          "[upstream_health]") {
  UpstreamHealth h(2, true);
  const unsigned a = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.1:53")));
  const unsigned b = static_cast<unsigned>(h.add(Endpoint::parse("192.0.2.2:53")));
  const auto c = policy(50, 1000, 1000);
  constexpr int kWriters = 4, kEach = 20000;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int downs = 0;
      for (int i = 0; i < kEach; ++i) {
        h.sent(a);
        h.replied(a, 1000 + static_cast<std::uint64_t>((i * 7 + w) % 2000), 1000 + static_cast<std::uint64_t>(i));
        h.sent(b);
        downs += h.failed(b, kTimeout, 0, 0, 5000, c, true) ? 1 : 0;
      }
      ::_exit(downs);
    }
    kids.push_back(pid);
  }
  int downs = 0;
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    downs += WEXITSTATUS(status);
  }
  const auto sa = h.snapshot(a, 0), sb = h.snapshot(b, 0);
  CHECK(sa.queries == kWriters * kEach);
  CHECK(sb.queries == kWriters * kEach);
  CHECK(sb.timeouts == kWriters * kEach);
  CHECK(downs == 1);  // one process made the transition (and would log it)
  CHECK(sb.downs == 1);
  CHECK(sb.down);
  CHECK(sb.consecutive >= c.down_after_timeouts);
  // The smoothed pair stays within the samples' range (never torn between writers).
  CHECK(sa.srtt_ms >= 1.0);
  CHECK(sa.srtt_ms <= 3.0);
  CHECK(sa.rttvar_ms <= 2.0);
  CHECK_FALSE(sa.down);
}

TEST_CASE("upstream health: the pick avoids down upstreams, prefers untried ones, and shares within the band",
          "[upstream_health]") {
  UpstreamHealth h(4, false);
  const int fast = h.add(Endpoint::parse("192.0.2.1:53"));
  const int slow = h.add(Endpoint::parse("192.0.2.2:53"));
  const int fresh = h.add(Endpoint::parse("192.0.2.3:53"));
  const int dead = h.add(Endpoint::parse("192.0.2.4:53"));
  const auto c = policy(1);
  h.replied(static_cast<unsigned>(fast), 1000, 1);     // rank 3 ms
  h.replied(static_cast<unsigned>(slow), 300000, 1);   // rank 900 ms: outside a 400 ms band
  take_down(h, static_cast<unsigned>(dead), 1000, c);
  auto spread = [&](std::vector<int> rows, std::uint64_t tried, unsigned* down = nullptr) {
    std::map<int, int> picks;
    for (std::uint32_t rnd = 0; rnd < 1000; ++rnd) ++picks[choose_upstream(h, rows, tried, 400000, rnd * 2654435761u, down)];
    return picks;
  };
  // fast (3 ms) and fresh (unknown: 376 ms) share; slow (900 ms) is outside; dead is skipped.
  unsigned down = 0;
  auto p = spread({fast, slow, fresh, dead}, 0, &down);
  CHECK(down == 1);
  CHECK(p.count(1) == 0);
  CHECK(p.count(3) == 0);
  CHECK(p[0] > 300);
  CHECK(p[2] > 300);
  // A band of 0: the fastest alone.
  CHECK(choose_upstream(h, std::vector<int>{fast, fresh}, 0, 0, 12345, nullptr) == 0);
  // Tried ones are passed over while others remain: fast tried -> fresh; both -> slow.
  CHECK(spread({fast, slow, fresh, dead}, 0b0001) == std::map<int, int>{{2, 1000}});
  CHECK(spread({fast, slow, fresh, dead}, 0b0101) == std::map<int, int>{{1, 1000}});
  // Every up one tried: retried, by rank again.
  p = spread({fast, slow, fresh, dead}, 0b0111);
  CHECK(p.count(1) == 0);
  CHECK(p.count(3) == 0);
  // Only the down one left: none (the caller fails fast); no row: unknown, never down.
  CHECK(choose_upstream(h, std::vector<int>{dead}, 0, 400000, 7, &down) == -1);
  CHECK(down == 1);
  CHECK(choose_upstream(h, std::vector<int>{dead, -1}, 0, 400000, 7, &down) == 1);
}

TEST_CASE("upstream health: an unproven upstream is put on trial beside the best other one, a proven one first",
          "[upstream_health]") {
  const UpstreamHealthConfig c = policy();
  UpstreamHealth h(8, false);
  std::vector<int> rows;
  for (const char* e : {"192.0.2.1:53", "192.0.2.2:53", "192.0.2.3:53", "192.0.2.4:53"})
    rows.push_back(h.add(Endpoint::parse(e)));
  const auto row = [&](int i) { return static_cast<unsigned>(rows[static_cast<std::size_t>(i)]); };
  // Nobody has answered: every one is unproven; the partner is the best-ranked other.
  CHECK_FALSE(h.proven(row(0)));
  CHECK(trial_partner(h, rows, 0, 0) == 1);
  // A proven one is preferred to a better-ranked unproven one... (rank: srtt + 4 rttvar)
  h.replied(row(3), 200 * kMs, 1 * kMs);
  CHECK(h.proven(row(3)));
  CHECK(trial_partner(h, rows, 0, 0) == 3);
  // ...and a proven picked upstream is never on trial.
  CHECK(trial_partner(h, rows, 0, 3) == -1);
  // A timeout of an attempt sent more than an RTO after its last reply puts a proven
  // upstream back on trial; a reply ends it.
  const std::uint64_t sent = 1 * kMs + h.rto_us(row(3)) + 1;
  h.failed(row(3), kTimeout, sent, h.rto_us(row(3)), sent + 1 * kMs, c, true);
  CHECK_FALSE(h.proven(row(3)));
  CHECK(trial_partner(h, rows, 0, 3) == 0);
  h.replied(row(3), 200 * kMs, sent + 2 * kMs);
  CHECK(h.proven(row(3)));
  // Partners are up and not yet tried by the query.
  CHECK(trial_partner(h, rows, 1ull << 3, 0) == 1);
  take_down(h, row(1), 5 * kMs, c);
  take_down(h, row(2), 5 * kMs, c);
  CHECK(trial_partner(h, rows, 1ull << 3, 0) == -1);
  // One upstream alone: nothing to race.
  CHECK(trial_partner(h, std::vector<int>{rows[0]}, 0, 0) == -1);
  // A row-less upstream (a reload found the table full) is never on trial, and counts as proven.
  CHECK(trial_partner(h, std::vector<int>{-1, rows[0]}, 0, 0) == -1);
  CHECK(trial_partner(h, std::vector<int>{rows[0], -1}, 0, 0) == 1);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The scenarios of `dnsarena-lab bench outage`: what happens to clients of a caching
// resolver when its upstream fails. Each runs against one resolver (serve or Unbound,
// outage_resolvers.hpp) with its own synthetic upstreams (`dnsarena-lab sim upstream`,
// sim_upstream_process.hpp) started fresh, so every upstream counter belongs to it.
//
//   outage      N cached names (TTL T) expire while the upstream is a black hole for B
//               seconds, under Zipf load over the names: the share of queries answered
//               with data within the response timer (target >= 99.9%), p99 latency;
//               then the upstream comes back and the same load goes on for 0.8 T (less
//               than one TTL, so before a name refreshed at recovery could be prefetched):
//               upstream queries per distinct name asked (target <= 1).
//   dead-first  two upstreams, the first a black hole, the second D ms away: the p99
//               latency of M misses (fresh names), target <= 2 x the live upstream's
//               measured RTT + 1 ms.
//   join        C clients (one UDP socket each) ask one uncached name at once, the
//               upstream 200 ms away so that every query arrives while the first is out;
//               R rounds, a new name each: upstream queries per round (target exactly 1).
//   prefetch    one name, TTL T2, asked at Q q/s for S seconds, the upstream D2 ms away:
//               client-visible misses (an answer later than D2/2 carrying a freshly
//               fetched TTL, a failure or a loss; target 0), and upstream queries against the S/T2 refreshes an expiring
//               entry needs (the extra upstream load prefetch costs).
//   slow        one upstream, slow for some names (1.2, 2.5 and 4 s; the others at once),
//               nothing stale: of N names per delay asked at once by stubs that wait 5 s,
//               the share answered with data and the latency (target: all), then the
//               share of F fresh fast names answered right after (target 100%)
//               (outage_slow_scenario.cpp).
// Responses count as "answered within the response timer" when NOERROR arrived within
// the timer plus a slack (a resolver answering stale when its timer fires replies just
// after it: Unbound at 1,802 ms); clients wait `client_timeout_s` (a stub's 3 s).
#pragma once
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/lab/outage_resolvers.hpp"

namespace dnsarena::bench {

struct OutageOptions {
  std::uint64_t seed = 1;
  unsigned response_timer_ms = 1800;
  unsigned timer_slack_ms = 100;
  double client_timeout_s = 3;
  // outage
  unsigned outage_names = 10000;
  unsigned outage_ttl_s = 5;
  double blackhole_s = 60;
  double outage_rate = 1000;
  double zipf = 0.9;
  double warm_rate = 2000;
  // dead-first
  unsigned dead_first_misses = 2000;
  double dead_first_rate = 100;
  unsigned live_rtt_ms = 10;
  // join
  unsigned join_clients = 1000;
  unsigned join_rounds = 5;
  unsigned join_delay_ms = 200;
  // prefetch
  double prefetch_rate = 1000;
  double prefetch_seconds = 60;
  unsigned prefetch_ttl_s = 10;
  unsigned prefetch_delay_ms = 100;
  // slow
  unsigned slow_names = 5;           // per delay
  unsigned slow_fast_after = 20;
  double slow_client_timeout_s = 5;  // the stub's wait
  bool slow_every_query = false;     // every query of a slow name is slow (else: its first, as a cold name)

  // Every figure small: all four scenarios for both resolvers in about two minutes.
  void make_quick();
};

// One judged figure of one scenario for one resolver.
struct OutageRow {
  std::string scenario, server, target, figure;
  std::optional<bool> met;  // nullopt: not judged (the figure says why)
};

struct ScenarioRun {
  std::vector<OutageRow> rows;
  nlohmann::json detail = nlohmann::json::object();
};

struct OutageContext {
  std::string lab_binary;  // the program with `sim upstream`
  std::string dir;         // scratch: profiles, logs, stats files
  const OutageOptions& options;
  const std::atomic<bool>& interrupted;  // set by SIGINT/SIGTERM: a scenario stops between phases
};

ScenarioRun run_outage_scenario(const OutageContext& ctx, const ResolverKind& resolver);
ScenarioRun run_dead_first_scenario(const OutageContext& ctx, const ResolverKind& resolver);
ScenarioRun run_join_scenario(const OutageContext& ctx, const ResolverKind& resolver);
ScenarioRun run_prefetch_scenario(const OutageContext& ctx, const ResolverKind& resolver);
ScenarioRun run_slow_scenario(const OutageContext& ctx, const ResolverKind& resolver);

}  // namespace dnsarena::bench

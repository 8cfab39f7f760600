// SPDX-License-Identifier: GPL-3.0-or-later
// The `slow` scenario of `dnsarena-lab bench outage` (outage_scenarios.hpp): an upstream
// slow for some names (SlowResponder, slow_responder.hpp), nothing stale in the cache.
//
//   1. For each delay of kSlowDelaysMs (1.2, 2.5 and 4 s: a recursive upstream on cold
//      names, whose retries wait for the same resolution; with slow_every_query every
//      query of the name takes that long), slow_names fresh names, every one asked at once by a stub that waits
//      slow_client_timeout_s (5 s): the share answered with data and the latency. Target:
//      every one answered within the stub's wait.
//   2. Right after, slow_fast_after fresh names that the upstream answers at once, one at a
//      time: the share answered with data. Target: 100% (slow names must not take the
//      server down for the others).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/lab/outage_scenarios.hpp"
#include "bench/lab/slow_responder.hpp"
#include "sim/traffic/load_client.hpp"

namespace dnsarena::bench {

namespace {

namespace traffic = sim::traffic;

constexpr unsigned kSlowDelaysMs[] = {1200, 2500, 4000};

common::Bytes to_wire(const std::string& dotted) {
  common::Bytes w;
  std::size_t start = 0;
  while (start < dotted.size()) {
    const std::size_t dot = dotted.find('.', start);
    const std::size_t end = dot == std::string::npos ? dotted.size() : dot;
    w.push_back(static_cast<std::uint8_t>(end - start));
    w.insert(w.end(), dotted.begin() + static_cast<long>(start), dotted.begin() + static_cast<long>(end));
    start = end + 1;
  }
  w.push_back(0);
  return w;
}

// What came back for each of `names` (type A): answered with data or not, and when.
struct Outcome {
  std::vector<double> ms;  // per name; < 0: no answer with data
  std::uint64_t servfail = 0, other = 0, lost = 0;
};

Outcome ask_all(std::uint16_t port, const std::vector<std::string>& names, double rate, double timeout_s) {
  std::vector<common::Bytes> wires;
  for (const std::string& n : names) wires.push_back(to_wire(n));
  Outcome out;
  out.ms.assign(names.size(), -1);
  traffic::LoadOptions o;
  o.port = port;
  o.rate = rate;
  o.queries = names.size();
  o.timeout_s = timeout_s;
  o.on_answer = [&](std::uint64_t k, double ms, const dns::Message& m) {
    if (m.rcode == 0 && !m.answer.empty()) out.ms[k] = ms;
    else if (m.rcode == 2) ++out.servfail;
    else ++out.other;
  };
  const traffic::QuerySource source = [&](std::uint64_t k, traffic::StreamQuery& q) {
    q.kind = traffic::StreamQuery::Kind::name;
    q.name_index = k;
    q.qname = wires[k];
    q.qtype = 1;
  };
  out.lost = traffic::run_load(source, o).lost;
  return out;
}

std::size_t answered(const Outcome& o) {
  return static_cast<std::size_t>(std::count_if(o.ms.begin(), o.ms.end(), [](double v) { return v >= 0; }));
}

// The q-quantile of the answered latencies (0 when none).
double quantile(const Outcome& o, double q) {
  std::vector<double> v;
  for (double ms : o.ms)
    if (ms >= 0) v.push_back(ms);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

ScenarioRun run_slow_scenario(const OutageContext& ctx, const ResolverKind& kind) {
  const OutageOptions& o = ctx.options;
  const std::string tag = "slow-" + kind.name;
  SlowResponder up(o.slow_every_query);
  const std::unique_ptr<Resolver> r = kind.start({up.address()}, tag);
  const nlohmann::json counters0 = r->counters();
  std::vector<std::string> names;
  for (const unsigned d : kSlowDelaysMs)
    for (unsigned i = 0; i < o.slow_names; ++i)
      names.push_back("slow" + std::to_string(d) + "x" + std::to_string(i) + "." + tag + ".zone");
  // Every slow name at once (1,000 q/s), each stub waiting its 5 s.
  const Outcome slow = ask_all(r->port(), names, 1000, o.slow_client_timeout_s);
  if (ctx.interrupted) throw std::runtime_error("interrupted");
  std::vector<std::string> fast_names;
  for (unsigned i = 0; i < o.slow_fast_after; ++i) fast_names.push_back("fast" + std::to_string(i) + "." + tag + ".zone");
  const Outcome fast = ask_all(r->port(), fast_names, 50, o.slow_client_timeout_s);
  const nlohmann::json counters1 = r->counters();

  ScenarioRun run;
  char buf[512];
  nlohmann::json per_delay = nlohmann::json::array();
  for (std::size_t g = 0; g < std::size(kSlowDelaysMs); ++g) {
    Outcome part;
    part.ms.assign(slow.ms.begin() + static_cast<long>(g * o.slow_names),
                   slow.ms.begin() + static_cast<long>((g + 1) * o.slow_names));
    const std::size_t got = answered(part);
    std::snprintf(buf, sizeof buf,
                  "%zu of %u answered with data within %.0f s (upstream %.1f s away for them; p50 %.0f ms, max %.0f ms)",
                  got, o.slow_names, o.slow_client_timeout_s, kSlowDelaysMs[g] / 1000.0, quantile(part, 0.5),
                  quantile(part, 1.0));
    const std::string scenario = "slow-" + std::to_string(kSlowDelaysMs[g]) + "ms";
    run.rows.push_back({scenario, kind.name, "every query answered within the stub's wait", buf, got == o.slow_names});
    per_delay.push_back({{"upstream_delay_ms", kSlowDelaysMs[g]},
                         {"names", o.slow_names},
                         {"answered_with_data", got},
                         {"answered_share", o.slow_names ? static_cast<double>(got) / o.slow_names : 0.0},
                         {"latency_ms_p50", quantile(part, 0.5)},
                         {"latency_ms_max", quantile(part, 1.0)}});
  }
  const std::size_t fast_got = answered(fast);
  std::snprintf(buf, sizeof buf,
                "%zu of %u fresh names answered with data right after the slow ones (max %.0f ms); %llu SERVFAIL, "
                "%llu lost; slow names: %llu SERVFAIL, %llu lost",
                fast_got, o.slow_fast_after, quantile(fast, 1.0), static_cast<unsigned long long>(fast.servfail),
                static_cast<unsigned long long>(fast.lost), static_cast<unsigned long long>(slow.servfail),
                static_cast<unsigned long long>(slow.lost));
  run.rows.push_back({"slow-fast-after", kind.name, "100% of fast names answered", buf, fast_got == o.slow_fast_after});
  run.detail = {{"client_timeout_s", o.slow_client_timeout_s},
                {"every_query_slow", o.slow_every_query},
                {"slow", per_delay},
                {"slow_servfail", slow.servfail},
                {"slow_lost", slow.lost},
                {"fast_names", o.slow_fast_after},
                {"fast_answered_with_data", fast_got},
                {"fast_answered_share", o.slow_fast_after ? static_cast<double>(fast_got) / o.slow_fast_after : 0.0},
                {"fast_servfail", fast.servfail},
                {"fast_lost", fast.lost},
                {"fast_latency_ms_max", quantile(fast, 1.0)},
                {"upstream_received", up.received()},
                {"upstream_answered", up.answered()},
                {"resolver_counters", r->counter_delta(counters0, counters1)}};
  return run;
}

}  // namespace dnsarena::bench

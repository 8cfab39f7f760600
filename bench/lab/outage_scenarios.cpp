// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/outage_scenarios.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/lab/burst_client.hpp"
#include "bench/lab/sim_upstream_process.hpp"
#include "sim/traffic/load_client.hpp"
#include "sim/traffic/query_stream.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace traffic = sim::traffic;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void sleep_until(Clock::time_point t, const std::atomic<bool>& interrupted) {
  while (Clock::now() < t && !interrupted) std::this_thread::sleep_for(20ms);
}

void check_interrupted(const OutageContext& ctx) {
  if (ctx.interrupted) throw std::runtime_error("interrupted");
}

// A traffic profile of `names` plain names (no negative, CNAME, ECS or stray traffic),
// every TTL `ttl_s`, written to DIR/profile-TAG.yaml for the upstream and parsed back for
// the load client, so both see the same names.
struct Zone {
  std::string path;
  sim::TrafficProfile profile;
  std::unique_ptr<traffic::UpstreamZone> zone;

  Zone(const OutageContext& ctx, const std::string& tag, std::uint64_t names, unsigned ttl_s) {
    path = ctx.dir + "/profile-" + tag + ".yaml";
    std::ofstream(path, std::ios::trunc) << "# bench outage, " << tag << "\nnames: " << names
                                         << "\nzipf: " << ctx.options.zipf << "\nttl: {min: " << ttl_s
                                         << ", max: " << ttl_s << "}\n";
    profile = sim::load_traffic_profile(path);
    zone = std::make_unique<traffic::UpstreamZone>(profile, ctx.options.seed, "zone.");
  }
  // Query source: name `first + k`, with its own type.
  traffic::QuerySource names_from(std::uint64_t first) const {
    return [this, first](std::uint64_t k, traffic::StreamQuery& q) {
      q.kind = traffic::StreamQuery::Kind::name;
      q.name_index = first + k;
      q.qname = zone->name_wire(first + k);
      q.qtype = zone->entry(first + k).qtype;
    };
  }
};

SimUpstreamSpec upstream_spec(const OutageContext& ctx, const std::string& tag, const Zone& z, unsigned delay_ms,
                              bool silent) {
  return {.binary = ctx.lab_binary, .dir = ctx.dir, .tag = tag, .profile_path = z.path, .seed = ctx.options.seed,
          .delay_ms = delay_ms, .silent = silent};
}

traffic::LoadOptions load_options(std::uint16_t port, double rate, std::uint64_t queries, double timeout_s) {
  traffic::LoadOptions o;
  o.port = port;
  o.rate = rate;
  o.queries = queries;
  o.timeout_s = timeout_s;
  return o;
}

// Every answer of a load: latencies, rcodes, NOERROR within a bound, the names asked.
struct AnswerLog {
  double within_ms = 0;
  std::vector<double> latency_ms;
  std::uint64_t noerror = 0, noerror_within = 0, servfail = 0, other = 0;

  explicit AnswerLog(double bound_ms) : within_ms(bound_ms) {}
  void attach(traffic::LoadOptions& o) {
    o.on_answer = [this](std::uint64_t, double ms, const dns::Message& m) {
      latency_ms.push_back(ms);
      if (m.rcode == 0) {
        ++noerror;
        if (ms <= within_ms) ++noerror_within;
      } else if (m.rcode == 2) {
        ++servfail;
      } else {
        ++other;
      }
    };
  }
  // The q-quantile over all `sent` queries, a lost one counted as slower than any answer:
  // nullopt when that quantile falls among the lost.
  std::optional<double> quantile_of_sent(std::uint64_t sent, double q) const {
    if (sent == 0) return std::nullopt;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sent)));
    if (rank == 0 || rank > latency_ms.size()) return std::nullopt;
    std::vector<double> v = latency_ms;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
    return v[rank - 1];
  }
};

nlohmann::json or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string ms_text(const std::optional<double>& v, double timeout_s) {
  char buf[48];
  if (v) std::snprintf(buf, sizeof buf, "%.1f ms", *v);
  else std::snprintf(buf, sizeof buf, "> %.0f ms (lost)", timeout_s * 1000);
  return buf;
}

nlohmann::json load_json(const traffic::LoadResult& r, const AnswerLog& a, double timeout_s) {
  return {{"sent", r.sent},
          {"answered", r.answered},
          {"lost", r.lost},
          {"noerror", a.noerror},
          {"servfail", a.servfail},
          {"other_rcode", a.other},
          {"achieved_qps", r.achieved_qps()},
          {"latency_ms_p50", or_null(a.quantile_of_sent(r.sent, 0.50))},
          {"latency_ms_p99", or_null(a.quantile_of_sent(r.sent, 0.99))},
          {"latency_ms_max_answered", r.latency_ms_max},
          {"client_timeout_s", timeout_s}};
}

std::uint64_t counter(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<std::uint64_t>() : 0;
}

// Every name of `z` asked (the cache filled): names not answered with data are asked
// again, up to three passes (a resolver on a busy machine may drop some of a fast fill);
// throws when fewer than 99% have data then (the scenario would measure nothing).
struct Warmed {
  std::uint64_t names = 0, with_data = 0, passes = 0, sent = 0;
};

Warmed warm(const OutageContext& ctx, const Resolver& r, const Zone& z, std::uint64_t names) {
  Warmed w;
  w.names = names;
  std::vector<std::uint64_t> todo(names);
  for (std::uint64_t i = 0; i < names; ++i) todo[i] = i;
  const traffic::QuerySource all = z.names_from(0);
  while (!todo.empty() && w.passes < 3) {
    check_interrupted(ctx);
    ++w.passes;
    std::vector<bool> answered(todo.size(), false);
    traffic::LoadOptions o = load_options(r.port(), ctx.options.warm_rate, todo.size(), ctx.options.client_timeout_s);
    o.on_answer = [&](std::uint64_t k, double, const dns::Message& m) {
      if (m.rcode == 0) answered[k] = true;
    };
    const traffic::QuerySource pass = [&](std::uint64_t k, traffic::StreamQuery& q) { all(todo[k], q); };
    w.sent += traffic::run_load(pass, o).sent;
    std::vector<std::uint64_t> left;
    for (std::size_t k = 0; k < todo.size(); ++k)
      if (!answered[k]) left.push_back(todo[k]);
    todo.swap(left);
  }
  w.with_data = names - todo.size();
  if (static_cast<double>(w.with_data) < 0.99 * static_cast<double>(names))
    throw std::runtime_error("warming " + std::to_string(names) + " names: only " + std::to_string(w.with_data) +
                             " answered with data after " + std::to_string(w.passes) + " passes");
  return w;
}

}  // namespace

void OutageOptions::make_quick() {
  outage_names = 1000;
  blackhole_s = 15;
  outage_rate = 300;
  dead_first_misses = 300;
  dead_first_rate = 100;
  join_clients = 300;
  join_rounds = 2;
  // Unbound prefetches in the last TTL/10 whole seconds: a TTL under 10 s never is.
  prefetch_rate = 300;
  prefetch_seconds = 21;
  prefetch_ttl_s = 10;
}

ScenarioRun run_outage_scenario(const OutageContext& ctx, const ResolverKind& kind) {
  const OutageOptions& o = ctx.options;
  const std::string tag = "outage-" + kind.name;
  const Zone z(ctx, tag, o.outage_names, o.outage_ttl_s);
  SimUpstreamProcess up(upstream_spec(ctx, tag, z, 0, false));
  const std::unique_ptr<Resolver> r = kind.start({up.address()}, tag);
  const Warmed warmed = warm(ctx, *r, z, o.outage_names);
  const auto warm_end = Clock::now();
  const nlohmann::json counters0 = r->counters();

  // The black hole, then every entry expires (TTL + 1 s after the last was cached).
  up.set_silent(true);
  const auto silent_at = Clock::now();
  sleep_until(warm_end + std::chrono::seconds(o.outage_ttl_s + 1), ctx.interrupted);
  check_interrupted(ctx);
  // Zipf load for what is left of the black hole, less the clients' wait for the last.
  const double load_s = std::max(2.0, o.blackhole_s - seconds_since(silent_at) - o.client_timeout_s);
  const auto outage_queries = static_cast<std::uint64_t>(std::llround(load_s * o.outage_rate));
  const traffic::QueryStream stream(z.profile, o.seed, o.seed + 7, "zone.");
  AnswerLog during(o.response_timer_ms + o.timer_slack_ms);
  traffic::LoadOptions lo = load_options(r->port(), o.outage_rate, outage_queries, o.client_timeout_s);
  during.attach(lo);
  const traffic::LoadResult out = traffic::run_load(stream, lo);
  check_interrupted(ctx);
  const nlohmann::json up_silent = up.settled_stats();
  const nlohmann::json counters1 = r->counters();
  up.set_silent(false);
  const double blackhole_s = seconds_since(silent_at);

  // Recovery: the same stream goes on for 0.8 TTL; upstream queries per distinct name.
  const double recovery_s = 0.8 * o.outage_ttl_s;
  const auto recovery_queries = static_cast<std::uint64_t>(std::llround(recovery_s * o.outage_rate));
  std::set<std::uint64_t> asked;
  const traffic::QuerySource after = [&](std::uint64_t k, traffic::StreamQuery& q) {
    stream.query(outage_queries + k, q);
    asked.insert(q.name_index);
  };
  AnswerLog recovered(o.response_timer_ms + o.timer_slack_ms);
  traffic::LoadOptions ro = load_options(r->port(), o.outage_rate, recovery_queries, o.client_timeout_s);
  recovered.attach(ro);
  const traffic::LoadResult rec = traffic::run_load(after, ro);
  const nlohmann::json up_after = up.settled_stats();
  const nlohmann::json counters2 = r->counters();
  const std::uint64_t recovery_upstream = counter(up_after, "answered") - counter(up_silent, "answered");
  const double per_name = asked.empty() ? 0 : static_cast<double>(recovery_upstream) / static_cast<double>(asked.size());

  ScenarioRun run;
  const double share = out.sent ? static_cast<double>(during.noerror_within) / static_cast<double>(out.sent) : 0;
  const std::optional<double> p99 = during.quantile_of_sent(out.sent, 0.99);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%.2f%% of %llu queries answered with data within %u ms (%.0f s black hole, %u names, TTL %u s, "
                "%.0f q/s Zipf %.2f): p99 %s; %llu SERVFAIL, %llu lost at %.0f s; upstream dropped %llu queries",
                100.0 * share, static_cast<unsigned long long>(out.sent), o.response_timer_ms, blackhole_s,
                o.outage_names, o.outage_ttl_s, o.outage_rate, o.zipf, ms_text(p99, o.client_timeout_s).c_str(),
                static_cast<unsigned long long>(during.servfail), static_cast<unsigned long long>(out.lost),
                o.client_timeout_s, static_cast<unsigned long long>(counter(up_silent, "blackholed")));
  run.rows.push_back({"outage", kind.name, ">= 99.9% answered within the response timer", buf, share >= 0.999});
  std::snprintf(buf, sizeof buf,
                "%llu upstream queries for %zu distinct names asked in the %.1f s after recovery: %.2f per name; "
                "%.2f%% of those %llu queries answered with data within %u ms",
                static_cast<unsigned long long>(recovery_upstream), asked.size(), recovery_s, per_name,
                rec.sent ? 100.0 * static_cast<double>(recovered.noerror_within) / static_cast<double>(rec.sent) : 0.0,
                static_cast<unsigned long long>(rec.sent), o.response_timer_ms);
  run.rows.push_back({"outage-recovery", kind.name, "<= 1 upstream query per name", buf, per_name <= 1.0});
  run.detail = {{"names", o.outage_names},
                {"ttl_s", o.outage_ttl_s},
                {"blackhole_s", blackhole_s},
                {"rate_qps", o.outage_rate},
                {"zipf", o.zipf},
                {"warm", {{"names", warmed.names}, {"with_data", warmed.with_data}, {"passes", warmed.passes}, {"sent", warmed.sent}}},
                {"answered_within_timer_share", share},
                {"answered_within_timer", during.noerror_within},
                {"timer_ms", o.response_timer_ms},
                {"timer_slack_ms", o.timer_slack_ms},
                {"during", load_json(out, during, o.client_timeout_s)},
                {"upstream_dropped_during", counter(up_silent, "blackholed")},
                {"recovery_s", recovery_s},
                {"recovery_upstream_queries", recovery_upstream},
                {"recovery_distinct_names", asked.size()},
                {"recovery_upstream_queries_per_name", per_name},
                {"recovery", load_json(rec, recovered, o.client_timeout_s)},
                {"resolver_counters_during", r->counter_delta(counters0, counters1)},
                {"resolver_counters_recovery", r->counter_delta(counters1, counters2)}};
  return run;
}

ScenarioRun run_dead_first_scenario(const OutageContext& ctx, const ResolverKind& kind) {
  const OutageOptions& o = ctx.options;
  const std::string tag = "dead-first-" + kind.name;
  constexpr unsigned kRttProbes = 200;
  const Zone z(ctx, tag, o.dead_first_misses + kRttProbes, 3600);
  SimUpstreamProcess dead(upstream_spec(ctx, tag + "-dead", z, 0, true));
  SimUpstreamProcess live(upstream_spec(ctx, tag + "-live", z, o.live_rtt_ms, false));
  // The live upstream's round trip, asked directly (names past the ones the misses use).
  AnswerLog direct(1e9);
  traffic::LoadOptions dl = load_options(live.port(), 200, kRttProbes, o.client_timeout_s);
  direct.attach(dl);
  const traffic::LoadResult rtt_run = traffic::run_load(z.names_from(o.dead_first_misses), dl);
  const std::optional<double> rtt = direct.quantile_of_sent(rtt_run.sent, 0.50);
  if (!rtt) throw std::runtime_error("dead-first: the live upstream did not answer its round-trip probes");
  const std::uint64_t live_before = live.settled("answered");

  const std::unique_ptr<Resolver> r = kind.start({dead.address(), live.address()}, tag);
  const nlohmann::json counters0 = r->counters();
  AnswerLog misses(1e9);
  traffic::LoadOptions lo = load_options(r->port(), o.dead_first_rate, o.dead_first_misses, o.client_timeout_s);
  misses.attach(lo);
  const traffic::LoadResult res = traffic::run_load(z.names_from(0), lo);
  const nlohmann::json counters1 = r->counters();
  const std::uint64_t to_dead = dead.settled("blackholed");
  const std::uint64_t to_live = live.settled("answered") - live_before;

  const double bound = 2 * *rtt + 1;
  const std::optional<double> p99 = misses.quantile_of_sent(res.sent, 0.99);
  const std::optional<double> p50 = misses.quantile_of_sent(res.sent, 0.50);
  ScenarioRun run;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "p99 miss latency %s (p50 %s) over %llu misses at %.0f q/s, live upstream RTT %.2f ms (bound %.1f ms); "
                "%llu queries to the dead upstream, %llu to the live one; %llu SERVFAIL, %llu lost",
                ms_text(p99, o.client_timeout_s).c_str(), ms_text(p50, o.client_timeout_s).c_str(),
                static_cast<unsigned long long>(res.sent), o.dead_first_rate, *rtt, bound,
                static_cast<unsigned long long>(to_dead), static_cast<unsigned long long>(to_live),
                static_cast<unsigned long long>(misses.servfail), static_cast<unsigned long long>(res.lost));
  run.rows.push_back({"dead-first", kind.name, "p99 miss <= 2 x live RTT + 1 ms", buf, p99 && *p99 <= bound});
  run.detail = {{"misses", o.dead_first_misses},
                {"rate_qps", o.dead_first_rate},
                {"live_delay_ms", o.live_rtt_ms},
                {"live_rtt_ms", *rtt},
                {"bound_ms", bound},
                {"latency_ms_p99", or_null(p99)},
                {"load", load_json(res, misses, o.client_timeout_s)},
                {"queries_to_dead_upstream", to_dead},
                {"queries_to_live_upstream", to_live},
                {"resolver_counters", r->counter_delta(counters0, counters1)}};
  return run;
}

ScenarioRun run_join_scenario(const OutageContext& ctx, const ResolverKind& kind) {
  const OutageOptions& o = ctx.options;
  const std::string tag = "join-" + kind.name;
  const Zone z(ctx, tag, std::max(16u, o.join_rounds), 3600);
  SimUpstreamProcess up(upstream_spec(ctx, tag, z, o.join_delay_ms, false));
  const std::unique_ptr<Resolver> r = kind.start({up.address()}, tag);
  const nlohmann::json counters0 = r->counters();
  std::vector<std::uint64_t> queries;
  std::uint64_t answered = 0, with_data = 0, sent = 0;
  double latency_max = 0, send_ms_max = 0;
  std::uint64_t before = up.settled("received");
  for (unsigned round = 0; round < o.join_rounds; ++round) {
    check_interrupted(ctx);
    const auto name = z.zone->name_wire(round);
    const BurstResult b = run_burst(r->port(), name, z.zone->entry(round).qtype, o.join_clients,
                                    std::chrono::milliseconds(static_cast<long>(o.client_timeout_s * 1000)));
    const std::uint64_t after = up.settled("received");
    queries.push_back(after - before);
    before = after;
    sent += b.sent;
    answered += b.answered;
    with_data += b.noerror;
    latency_max = std::max(latency_max, b.latency_ms_max);
    send_ms_max = std::max(send_ms_max, b.send_ms);
  }
  const nlohmann::json counters1 = r->counters();
  const bool all_one = !queries.empty() && std::all_of(queries.begin(), queries.end(), [](auto q) { return q == 1; });
  std::string per_round;
  for (std::uint64_t q : queries) per_round += (per_round.empty() ? "" : ", ") + std::to_string(q);
  ScenarioRun run;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "upstream queries per round: %s (%u rounds of %u clients at once, sent within %.1f ms, upstream %u ms "
                "away); %llu of %llu answered with data, slowest %.0f ms",
                per_round.c_str(), o.join_rounds, o.join_clients, send_ms_max, o.join_delay_ms,
                static_cast<unsigned long long>(with_data), static_cast<unsigned long long>(sent), latency_max);
  run.rows.push_back({"join", kind.name, "exactly 1 upstream query per round", buf, all_one});
  run.detail = {{"clients", o.join_clients},
                {"rounds", o.join_rounds},
                {"upstream_delay_ms", o.join_delay_ms},
                {"upstream_queries_per_round", queries},
                {"sent", sent},
                {"answered", answered},
                {"answered_with_data", with_data},
                {"send_ms_max", send_ms_max},
                {"latency_ms_max", latency_max},
                {"resolver_counters", r->counter_delta(counters0, counters1)}};
  return run;
}

ScenarioRun run_prefetch_scenario(const OutageContext& ctx, const ResolverKind& kind) {
  const OutageOptions& o = ctx.options;
  const std::string tag = "prefetch-" + kind.name;
  const Zone z(ctx, tag, 16, o.prefetch_ttl_s);
  SimUpstreamProcess up(upstream_spec(ctx, tag, z, o.prefetch_delay_ms, false));
  const std::unique_ptr<Resolver> r = kind.start({up.address()}, tag);
  warm(ctx, *r, z, 1);
  const auto cached_at = Clock::now();
  const std::uint64_t before = up.settled("received");
  const nlohmann::json counters0 = r->counters();
  // One name, asked over and over: a client-visible miss is an answer that took more
  // than half the upstream's delay (it waited for the upstream) with a fresh TTL, a
  // failure, or a loss.
  const double slow_ms = o.prefetch_delay_ms / 2.0;
  std::uint64_t slow = 0, slow_fresh = 0, visible_answers = 0;
  AnswerLog log(slow_ms);
  const auto queries = static_cast<std::uint64_t>(std::llround(o.prefetch_rate * o.prefetch_seconds));
  traffic::LoadOptions lo = load_options(r->port(), o.prefetch_rate, queries, o.client_timeout_s);
  log.attach(lo);
  const auto inner = lo.on_answer;
  lo.on_answer = [&](std::uint64_t k, double ms, const dns::Message& m) {
    inner(k, ms, m);
    // A slow answer is a miss when it carries a freshly fetched TTL: a hit delayed by the
    // scheduler (a busy machine) carries the entry's remaining TTL, except in the first
    // second after a refresh.
    const bool fresh = !m.answer.empty() && m.answer.front().ttl + 1 >= o.prefetch_ttl_s;
    if (ms > slow_ms) ++slow;
    if (ms > slow_ms && fresh) ++slow_fresh;
    if ((ms > slow_ms && fresh) || m.rcode != 0) ++visible_answers;
  };
  const traffic::QuerySource first = z.names_from(0);
  const traffic::QuerySource one_name = [&first](std::uint64_t, traffic::StreamQuery& q) { first(0, q); };
  const traffic::LoadResult res = traffic::run_load(one_name, lo);
  const double span_s = seconds_since(cached_at);
  const std::uint64_t upstream = up.settled("received") - before;
  const nlohmann::json counters1 = r->counters();
  const std::uint64_t failures = log.servfail + log.other;
  const std::uint64_t visible = visible_answers + res.lost;
  // An entry that simply expires needs one refresh per TTL over the span it was asked.
  const double refreshes_needed = std::floor(span_s / o.prefetch_ttl_s);
  const double extra = refreshes_needed > 0 ? static_cast<double>(upstream) / refreshes_needed - 1 : 0;
  const nlohmann::json counted = r->counter_delta(counters0, counters1);
  std::string prefetches = "; prefetches not counted by this resolver";
  for (const char* key : {"prefetches", "total.num.prefetch"})
    if (counted.contains(key))
      prefetches = "; it counted " + std::to_string(counted[key].get<long long>()) + " prefetches";
  ScenarioRun run;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%llu client-visible misses of %llu queries (%llu answers slower than %.0f ms, %llu of them with a fresh "
                "TTL; %llu failed, %llu lost; max "
                "%.0f ms); %llu upstream queries in %.0f s against %.0f expiries of a %u s TTL: %+.0f%% upstream load",
                static_cast<unsigned long long>(visible), static_cast<unsigned long long>(res.sent),
                static_cast<unsigned long long>(slow), slow_ms, static_cast<unsigned long long>(slow_fresh),
                static_cast<unsigned long long>(failures),
                static_cast<unsigned long long>(res.lost), res.latency_ms_max, static_cast<unsigned long long>(upstream),
                span_s, refreshes_needed, o.prefetch_ttl_s, 100 * extra);
  run.rows.push_back({"prefetch", kind.name, "0 client-visible misses", buf + prefetches, visible == 0});
  run.detail = {{"rate_qps", o.prefetch_rate},
                {"seconds", o.prefetch_seconds},
                {"ttl_s", o.prefetch_ttl_s},
                {"upstream_delay_ms", o.prefetch_delay_ms},
                {"client_visible_misses", visible},
                {"slower_than_ms", slow_ms},
                {"slow_answers", slow},
                {"slow_answers_with_fresh_ttl", slow_fresh},
                {"failed", failures},
                {"load", load_json(res, log, o.client_timeout_s)},
                {"upstream_queries", upstream},
                {"span_s", span_s},
                {"expiries_in_span", refreshes_needed},
                {"extra_upstream_load_share", extra},
                {"resolver_counters", counted}};
  return run;
}

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench mrc`: the miss-ratio curve (workers/miss_ratio_curves.hpp) of one
// serve against the hit rates real serves measure at other sizes, on one traffic stream.
//
// Steps (all processes on loopback, every child stopped at the end):
//   1. `dnsarena-lab sim upstream` (the synthetic authoritative of --profile, --seed).
//   2. Per capacity factor f of --factors (default 0.25 0.5 1 2 4): a fresh serve with
//      max_entries f C and arena f A (C, A: --entries, --arena-bytes; regions of
//      --region-bytes), curves on, and the same --queries of the profile's query stream
//      (sim/traffic/query_stream.hpp, seeded) sent at --rate q/s (paced, open loop).
//      Measured: the run's hit rate (hits / lookups, serve's counters), its workers' CPU
//      per query.
//   3. The 1x run's curve (`stats --mrc`'s snapshot, read once it counts the whole
//      stream) is the prediction: at every f, |predicted - measured|; their mean over the
//      other factors, and at 1x the curve against that serve's own hit rate.
//   4. Convergence: during the 1x run the snapshot is read each second; the queries sent
//      until every factor's curve stays within 2 points of its final value.
//   5. Cost: --cost-pairs more 1x runs with the curves on and off, alternated, same
//      stream: CPU per query (workers' utime + stime / queries) of each, and the curves'
//      shared memory against the segment's.
//   6. The hooks alone, in this process: ns per call of the hit hook (mrc_feed_hit) with
//      the curves of a --entries cache at its sample rate, and with the curves off, over
//      the same 100,000 cached keys (a cost without the machine's run-to-run noise).
// --check: exit 1 when the prediction misses a measured hit rate by more than
// --max-error (a gross-error bound for the short CI run; the figures themselves are for
// the long one).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/lab/commands.hpp"
#include "bench/lab/serve_process.hpp"
#include "bench/lab/sim_upstream_process.hpp"
#include "common/sibling_program.hpp"
#include "sim/traffic/load_client.hpp"
#include "sim/traffic/query_stream.hpp"
#include "sim/workload/traffic_profile.hpp"
#include "cache/cache.hpp"
#include "workers/miss_ratio_curves.hpp"
#include "workers/mrc_report.hpp"

namespace dnsarena::bench {

namespace mrc_bench {

struct MrcBenchOptions {
  std::string profile;  // empty: the embedded seed profile
  std::uint64_t seed = 1;
  std::uint64_t entries = 16384;
  std::uint64_t arena_bytes = 2u << 20;
  std::uint32_t region_bytes = 16384;
  std::vector<double> factors{0.25, 0.5, 1, 2, 4};
  std::uint64_t queries = 300000;
  double rate = 10000;
  unsigned workers = 2;
  double sample_rate = 0.001;
  unsigned cost_pairs = 1;
  bool json = false;
  bool check = false;
  double max_error = 0.05;
};

struct Run {
  double factor = 1;
  bool curves = true;
  std::uint64_t sent = 0, answered = 0, lookups = 0, hits = 0;
  double cpu_s = 0;
  double hit_rate() const { return lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0; }
  double cpu_us_per_query() const { return answered ? cpu_s * 1e6 / static_cast<double>(answered) : 0; }
  nlohmann::json curve;  // the 1x curves-on run's snapshot
  std::uint64_t segment_bytes = 0;
  std::vector<std::pair<double, std::vector<double>>> samples;  // (queries sent, hit rate per model)
};

struct Scratch {
  std::string dir;
  ~Scratch() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

std::string config_for(const MrcBenchOptions& o, double f, bool curves) {
  const auto entries = static_cast<std::uint64_t>(std::llround(static_cast<double>(o.entries) * f));
  const auto arena = static_cast<std::uint64_t>(std::llround(static_cast<double>(o.arena_bytes) * f));
  return "cache: {max_entries: " + std::to_string(entries) + ", arena_bytes: " + std::to_string(arena) +
         ", region_bytes: " + std::to_string(o.region_bytes) + "}\nmrc: {enabled: " + (curves ? "true" : "false") +
         ", sample_rate: " + std::to_string(o.sample_rate) + "}\n";
}

std::vector<double> hit_rates(const nlohmann::json& snap) {
  std::vector<double> v;
  for (const auto& m : snap["models"]) v.push_back(m["hit_rate"].get<double>());
  return v;
}

Run run_once(const MrcBenchOptions& o, const std::string& dir, const std::string& upstream, double f, bool curves,
             bool sample, const std::string& tag) {
  Run run;
  run.factor = f;
  run.curves = curves;
  const std::string cfg = dir + "/" + tag + ".yaml";
  std::ofstream(cfg) << config_for(o, f, curves);
  ServeSpec spec;
  spec.binary = common::daemon_program();
  spec.dir = dir;
  spec.tag = tag;
  spec.segment_prefix = "dnsarena-bench-mrc";
  spec.workers = o.workers;
  spec.max_entries = static_cast<std::uint64_t>(std::llround(static_cast<double>(o.entries) * f));
  spec.arena = std::to_string(static_cast<std::uint64_t>(std::llround(static_cast<double>(o.arena_bytes) * f)));
  spec.args = {"--config", cfg, "--upstream", upstream, "--no-metrics"};
  ServeProcess serve(spec);
  const sim::TrafficProfile profile =
      o.profile.empty() ? sim::default_traffic_profile() : sim::load_traffic_profile(o.profile);
  const sim::traffic::QueryStream stream(profile, o.seed, o.seed + 7, "zone.");
  sim::traffic::LoadOptions lo;
  lo.port = serve.port();
  lo.rate = o.rate;
  lo.queries = o.queries;
  lo.timeout_s = 2;
  lo.sockets = std::max(4u, static_cast<unsigned>(o.rate * 2 / 40000) + 1);
  const double cpu0 = serve.workers_cpu();
  std::atomic<bool> done{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread sampler;
  if (sample)
    sampler = std::thread([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        if (const auto snap = workers::read_mrc_snapshot(serve.segment())) {
          const double age = snap->value("age_s", 0.0);
          const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - age;
          run.samples.emplace_back(std::min(static_cast<double>(o.queries), std::max(0.0, t) * o.rate), hit_rates(*snap));
        }
      }
    });
  const sim::traffic::LoadResult r = sim::traffic::run_load(stream, lo);
  done = true;
  if (sampler.joinable()) sampler.join();
  run.cpu_s = serve.workers_cpu() - cpu0;
  run.sent = r.sent;
  run.answered = r.answered;
  const nlohmann::json t = serve.totals();
  run.lookups = t.value("lookups", 0ull);
  run.hits = t.value("hits", 0ull);
  if (curves && f == 1) {
    // The curve once the snapshot (written once a second) counts the whole stream: its
    // 1x request count stops moving.
    std::uint64_t last = ~0ull;
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1100));
      const auto snap = workers::read_mrc_snapshot(serve.segment());
      if (!snap) continue;
      run.curve = *snap;
      std::uint64_t now = 0;
      for (const auto& m : (*snap)["models"])
        if (m["factor"] == 1.0) now = m["requests"].get<std::uint64_t>();
      if (now == last) break;
      last = now;
    }
    if (run.curve.is_null()) throw std::runtime_error("the 1x serve published no miss-ratio curve (see " + serve.log() + ")");
    run.segment_bytes = run.curve.value("real_segment_bytes", 0ull);
  }
  return run;
}

// Step 6: ns per hit-hook call with the curves on (models of a cache of o.entries at the
// serve's sample rate) and off, over 100,000 keys held in a private cache.
std::pair<double, double> hook_ns(const MrcBenchOptions& o) {
  cache::Geometry real;
  real.max_entries = o.entries;
  real.arena_bytes = o.arena_bytes;
  real.region_bytes = o.region_bytes;
  cache::Geometry held;
  held.max_entries = 200000;
  held.arena_bytes = 64u << 20;
  cache::Segment seg = cache::Segment::create_private(held);
  cache::Cache c(seg);
  workers::MrcSettings s;
  s.sample_rate = o.sample_rate;
  workers::MissRatioCurves curves(real, s, 4);
  constexpr unsigned kKeys = 100000;
  std::vector<cache::CacheKey> keys;
  keys.reserve(kKeys);
  const std::uint32_t now = cache::wall_clock_now();
  for (unsigned i = 0; i < kKeys; ++i) {
    std::string label = "k" + std::to_string(i);
    std::vector<std::uint8_t> name{static_cast<std::uint8_t>(label.size())};
    name.insert(name.end(), label.begin(), label.end());
    name.insert(name.end(), {4, 't', 'e', 's', 't', 0});
    keys.emplace_back(name, 1);
    static const std::uint8_t addr[4] = {192, 0, 2, 1};
    const cache::RecordData rec{{}, 1, 1, 3600, addr};
    cache::Answer a;
    a.ttl = 3600;
    a.sections[cache::kAnswer] = {&rec, 1};
    c.insert(keys.back(), a, now);
  }
  auto time_calls = [&](workers::MissRatioCurves* on) {
    workers::set_host_curves(on);
    constexpr unsigned kCalls = 3'000'000;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < kCalls; ++i) workers::mrc_feed_hit(c, keys[(i * 7919u) % kKeys], now);
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    workers::set_host_curves(nullptr);
    return ns / kCalls;
  };
  time_calls(&curves);  // warm: the models fill
  double on = 1e300, off = 1e300;
  for (int r = 0; r < 3; ++r) on = std::min(on, time_calls(&curves)), off = std::min(off, time_calls(nullptr));
  return {on, off};
}

// The curve's hit rate at factor f (its model of that factor), or NaN.
double predicted(const nlohmann::json& curve, double f) {
  for (const auto& m : curve["models"])
    if (std::fabs(m["factor"].get<double>() - f) < 1e-9) return m["hit_rate"].get<double>();
  return std::nan("");
}

int run_mrc_bench(const MrcBenchOptions& o) {
  Scratch scratch{"/tmp/dnsarena-bench-mrc-" + std::to_string(::getpid())};
  const std::string& dir = scratch.dir;
  std::filesystem::create_directories(dir);
  SimUpstreamSpec us;
  us.binary = common::sibling_program("dnsarena-lab");
  us.dir = dir;
  us.tag = "mrc";
  us.profile_path = o.profile;
  us.seed = o.seed;
  SimUpstreamProcess upstream(us);

  std::vector<Run> runs;
  const Run* one = nullptr;
  for (double f : o.factors) {
    char tag[32];
    std::snprintf(tag, sizeof tag, "f%g", f);
    runs.push_back(run_once(o, dir, upstream.address(), f, true, f == 1, tag));
  }
  for (const Run& r : runs)
    if (r.factor == 1) one = &r;
  if (!one) throw std::runtime_error("--factors must include 1 (the instance whose curve predicts the others)");
  std::vector<Run> cost;
  for (unsigned p = 0; p < o.cost_pairs; ++p) {
    cost.push_back(run_once(o, dir, upstream.address(), 1, false, false, "off" + std::to_string(p)));
    cost.push_back(run_once(o, dir, upstream.address(), 1, true, false, "on" + std::to_string(p)));
  }

  nlohmann::json j;
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) == 3) j["load_average"] = {load[0], load[1], load[2]};
  j["profile"] = o.profile.empty() ? "seed (embedded)" : o.profile;
  j["queries"] = o.queries;
  j["rate_qps"] = o.rate;
  j["entries_1x"] = o.entries;
  j["arena_bytes_1x"] = o.arena_bytes;
  j["sample_rate"] = one->curve["sample_rate"];
  j["runs"] = nlohmann::json::array();
  double abs_sum = 0;
  unsigned others = 0;
  bool within = true;
  for (const Run& r : runs) {
    const double p = predicted(one->curve, r.factor);
    const double err = p - r.hit_rate();
    if (r.factor != 1) abs_sum += std::fabs(err), ++others;
    if (!(std::fabs(err) <= o.max_error)) within = false;
    j["runs"].push_back({{"factor", r.factor},
                         {"entries", std::llround(static_cast<double>(o.entries) * r.factor)},
                         {"sent", r.sent},
                         {"answered", r.answered},
                         {"measured_hit_rate", r.hit_rate()},
                         {"predicted_hit_rate", p},
                         {"error_points", 100 * err},
                         {"cpu_us_per_query", r.cpu_us_per_query()}});
  }
  j["mean_abs_error_points_other_sizes"] = others ? 100 * abs_sum / others : 0.0;
  j["error_points_1x_vs_live"] = 100 * (predicted(one->curve, 1) - one->hit_rate());
  // Convergence: the first sample after which every factor stays within 2 points.
  const std::vector<double> final_rates = hit_rates(one->curve);
  double converged = -1;
  for (std::size_t i = one->samples.size(); i-- > 0;) {
    bool close = true;
    for (std::size_t m = 0; m < final_rates.size() && m < one->samples[i].second.size(); ++m)
      close = close && std::fabs(one->samples[i].second[m] - final_rates[m]) <= 0.02;
    if (!close) break;
    converged = one->samples[i].first;
  }
  j["convergence_queries"] = converged >= 0 ? nlohmann::json(converged) : nlohmann::json(nullptr);
  j["curve"] = one->curve;
  double on = 0, off = 0;
  for (const Run& r : cost) (r.curves ? on : off) += r.cpu_us_per_query();
  if (!cost.empty()) {
    j["cost"] = {{"pairs", o.cost_pairs},
                 {"cpu_us_per_query_on", on / o.cost_pairs},
                 {"cpu_us_per_query_off", off / o.cost_pairs},
                 {"cpu_increase_percent", off > 0 ? 100 * (on - off) / off : 0.0}};
  }
  const auto [hook_on, hook_off] = hook_ns(o);
  j["hook_ns_per_hit_on"] = hook_on;
  j["hook_ns_per_hit_off"] = hook_off;
  const double shared = one->curve.value("shared_bytes", 0.0);
  j["shared_bytes"] = shared;
  j["shared_percent_of_segment"] = one->segment_bytes ? 100 * shared / static_cast<double>(one->segment_bytes) : 0.0;

  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("dnsarena-lab bench mrc: %llu queries of %s at %.0f q/s per run, 1x = %llu entries / %.1f MiB, "
                "sample rate %.6g\n",
                static_cast<unsigned long long>(o.queries), j["profile"].get<std::string>().c_str(), o.rate,
                static_cast<unsigned long long>(o.entries), static_cast<double>(o.arena_bytes) / (1 << 20),
                j["sample_rate"].get<double>());
    std::printf("%-7s %9s %10s %10s %10s %12s\n", "factor", "entries", "measured", "predicted", "error pt",
                "CPU us/q");
    for (const auto& x : j["runs"])
      std::printf("%-7g %9lld %9.2f%% %9.2f%% %+10.2f %12.2f\n", x["factor"].get<double>(), x["entries"].get<long long>(),
                  100 * x["measured_hit_rate"].get<double>(), 100 * x["predicted_hit_rate"].get<double>(),
                  x["error_points"].get<double>(), x["cpu_us_per_query"].get<double>());
    std::printf("mean |error| at the other sizes: %.2f points (target <= 2); 1x curve vs the live cache: %+.2f points "
                "(target <= 1)\n",
                j["mean_abs_error_points_other_sizes"].get<double>(), j["error_points_1x_vs_live"].get<double>());
    if (j["convergence_queries"].is_null()) std::printf("convergence: not within 2 points before the end\n");
    else std::printf("convergence: within 2 points of the final curve after %.0f queries\n",
                     j["convergence_queries"].get<double>());
    if (j.contains("cost"))
      std::printf("cost: %.2f us/query with the curves, %.2f without (%+.1f%%, %u pair(s)); shared memory %.2f MiB = "
                  "%.2f%% of the segment\n",
                  j["cost"]["cpu_us_per_query_on"].get<double>(), j["cost"]["cpu_us_per_query_off"].get<double>(),
                  j["cost"]["cpu_increase_percent"].get<double>(), o.cost_pairs, shared / (1 << 20),
                  j["shared_percent_of_segment"].get<double>());
  }
  if (!o.json)
    std::printf("the hit hook alone: %.1f ns per call with the curves (sample rate %.6g), %.1f ns without (best of 3 x "
                "3,000,000 calls)\n",
                hook_on, one->curve["sample_rate"].get<double>(), hook_off);
  if (o.check && !within) {
    std::fprintf(stderr, "bench mrc: a prediction missed its measured hit rate by more than %.3f\n", o.max_error);
    return 1;
  }
  return 0;
}

}  // namespace mrc_bench

void add_bench_mrc_command(CLI::App& bench) {
  using namespace mrc_bench;
  auto o = std::make_shared<MrcBenchOptions>();
  auto* cmd = bench.add_subcommand(
      "mrc",
      "The miss-ratio curve of one serve (stats --mrc) against the hit rates real serves measure at other\n"
      "sizes: one query stream through serves at --factors x the capacity; prediction error, convergence, and\n"
      "the curves' CPU per query (on against off, same run) and shared memory.");
  cmd->add_option("--profile", o->profile, "traffic profile YAML (default: the embedded seed profile)");
  cmd->add_option("--seed", o->seed, "seed of the names (upstream) and of the stream")->capture_default_str();
  cmd->add_option("--entries", o->entries, "max_entries of the 1x serve")->check(CLI::Range(1000ull, 100000000ull))->capture_default_str();
  cmd->add_option("--arena-bytes", o->arena_bytes, "arena bytes of the 1x serve")->capture_default_str();
  cmd->add_option("--region-bytes", o->region_bytes, "region bytes of every serve (a power of two)")->capture_default_str();
  cmd->add_option("--factors", o->factors, "capacity factors, one serve each; must include 1")
      ->check(CLI::Range(0.01, 100.0));
  cmd->add_option("--queries", o->queries, "queries per run")->check(CLI::Range(1000ull, 100000000ull))->capture_default_str();
  cmd->add_option("--rate", o->rate, "queries per second")->check(CLI::Range(100.0, 200000.0))->capture_default_str();
  cmd->add_option("--workers", o->workers, "workers per serve")->check(CLI::Range(1u, 64u))->capture_default_str();
  cmd->add_option("--sample-rate", o->sample_rate, "serve's mrc.sample_rate")->check(CLI::Range(1e-9, 1.0))->capture_default_str();
  cmd->add_option("--cost-pairs", o->cost_pairs, "1x runs with the curves off and on, for the cost (0: none)")
      ->capture_default_str();
  cmd->add_option("--max-error", o->max_error, "--check's bound on |predicted - measured| at each factor")
      ->capture_default_str();
  cmd->add_flag("--check", o->check, "exit 1 when a prediction misses by more than --max-error");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    const int rc = run_mrc_bench(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench

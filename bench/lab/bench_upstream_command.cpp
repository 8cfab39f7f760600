// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench upstream`: cache misses forwarded over each upstream transport (a
// forward zone's `transport`: udp, tcp, tls), same names, same upstream, same run.
//
// Steps (all processes on loopback, every child stopped at the end):
//   1. `dnsarena-lab sim upstream` (the synthetic authoritative) and its first --misses
//      names as a dnsperf file (`sim upstream --write-names`).
//   2. A relay: `dnsarena serve` (1 worker) listening for plain DNS and for DNS over TLS
//      (a self-signed certificate for relay.bench made by certtool in the scratch
//      directory), forwarding to the synthetic upstream, warmed with one pass of the names:
//      from then on it answers every one of them from its cache, so it is an upstream
//      with a round trip of a cache hit and no upstream of its own in the measurement.
//   3. Per transport, a fresh front serve (1 worker, a new segment: every name a miss)
//      forwarding "." to the relay over that transport (tls: verified against the
//      certificate, tls_auth_name relay.bench); dnsperf sends each name once at --rate q/s.
//   4. Per run: misses answered, lost, SERVFAIL, dnsperf's average latency, the front
//      worker's CPU time (utime+stime) per miss, the connections it opened to
//      the relay (upstream_connections) and how many resumed a TLS session.
// The target read here: over tcp and tls, connections opened per 10,000 misses stay at
// the worker count (no handshake per query), and a miss's latency stays at the
// upstream's round trip (the ratio to udp's in the same run is printed).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/lab/commands.hpp"
#include "bench/lab/dnsperf_stats.hpp"
#include "bench/lab/self_signed_certificate.hpp"
#include "bench/lab/serve_process.hpp"
#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "common/sibling_program.hpp"

namespace dnsarena::bench {

namespace {

struct UpstreamBenchOptions {
  unsigned misses = 10000;
  unsigned rate = 2000;
  unsigned seed = 1;
  std::vector<std::string> transports{"udp", "tcp", "tls"};
  bool json = false;
};

struct TransportRun {
  std::string transport;
  std::uint64_t sent = 0, completed = 0, lost = 0;
  double avg_latency_ms = 0, max_latency_ms = 0;
  double cpu_us_per_miss = 0;
  std::uint64_t upstream_queries = 0, connections = 0, resumed = 0, servfail = 0, timeouts = 0;
};

// dnsperf, each name once at `rate` q/s; its statistics into `run`.
void dnsperf(std::uint16_t port, const std::string& file, unsigned rate, const std::string& log, TransportRun& run) {
  common::ChildProcess perf = spawn_logged({"dnsperf", "-s", "127.0.0.1", "-p", std::to_string(port), "-d", file, "-n", "1",
                                     "-Q", std::to_string(rate), "-t", "5", "-c", "1"},
                                    log);
  perf.wait();
  const DnsperfStats stats = parse_dnsperf_output(slurp(log));
  if (stats.sent == 0) throw std::runtime_error("dnsperf produced no statistics (see " + log + ")");
  run.sent = stats.sent;
  run.completed = stats.completed;
  run.lost = stats.lost;
  run.avg_latency_ms = stats.avg_latency_ms;
  run.max_latency_ms = stats.max_latency_ms;
}

std::uint64_t total(const nlohmann::json& totals, const char* counter) {
  return totals.contains(counter) ? totals[counter].get<std::uint64_t>() : 0;
}

// A serve with 1 worker and the config file `config`.
ServeSpec serve_spec(const std::string& dir, const std::string& tag, const std::string& config,
                     std::vector<std::string> more = {}) {
  ServeSpec spec;
  spec.binary = common::daemon_program();
  spec.dir = dir;
  spec.tag = tag;
  spec.segment_prefix = "dnsarena-bench-upstream";
  spec.workers = 1;
  spec.max_entries = 400000;
  spec.arena = "128M";
  spec.args = {"--config", config};
  spec.args.insert(spec.args.end(), more.begin(), more.end());
  return spec;
}

struct Scratch {
  std::string dir;
  ~Scratch() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

int run_upstream_bench(const UpstreamBenchOptions& o) {
  Scratch scratch{"/tmp/dnsarena-bench-upstream-" + std::to_string(::getpid())};
  const std::string& dir = scratch.dir;
  std::filesystem::create_directories(dir);
  const std::string lab = common::sibling_program("dnsarena-lab");

  // 1. The synthetic upstream and the names.
  const std::uint16_t up_port = common::free_loopback_port();
  common::ChildProcess upstream = spawn_logged({lab, "sim", "upstream", "--port", std::to_string(up_port), "--seed",
                                         std::to_string(o.seed)},
                                        dir + "/upstream.log");
  if (!wait_tcp(up_port, upstream)) throw std::runtime_error("sim upstream did not start:\n" + slurp(dir + "/upstream.log"));
  common::ChildProcess names = spawn_logged({lab, "sim", "upstream", "--seed", std::to_string(o.seed), "--write-names",
                                      dir + "/all-names"},
                                     dir + "/names.log");
  if (names.wait() != 0) throw std::runtime_error("sim upstream --write-names failed:\n" + slurp(dir + "/names.log"));
  {
    std::ifstream all(dir + "/all-names");
    std::ofstream some(dir + "/names");
    std::string line;
    unsigned n = 0;
    while (n < o.misses && std::getline(all, line)) some << line << '\n', ++n;
    if (n < o.misses) throw std::runtime_error("the profile has " + std::to_string(n) + " names, fewer than --misses");
  }
  const std::string file = dir + "/names";

  // 2. The relay, with DoT, warmed.
  const auto [cert, key] = make_self_signed_certificate(dir, "relay.bench");
  const std::uint16_t relay_tls = common::free_loopback_port();
  std::ofstream(dir + "/relay.yaml") << "tls: {listen: [127.0.0.1:" << relay_tls << "], certificate: " << cert
                                     << ", key: " << key << "}\n";
  ServeProcess relay(serve_spec(dir, "relay", dir + "/relay.yaml", {"--upstream", "127.0.0.1:" + std::to_string(up_port)}));
  TransportRun warm;
  dnsperf(relay.port(), file, std::max(o.rate, 5000u), dir + "/warm.log", warm);

  // 3. Each transport against the warm relay.
  std::vector<TransportRun> runs;
  for (const std::string& t : o.transports) {
    std::string zone = "forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" +
                       std::to_string(t == "tls" ? relay_tls : relay.port()) + "], transport: " + t;
    if (t == "tls") zone += ", tls_auth_name: relay.bench, tls_ca_file: " + cert;
    std::ofstream(dir + "/front-" + t + ".yaml") << zone << "}\n";
    TransportRun run;
    run.transport = t;
    ServeProcess front(serve_spec(dir, "front-" + t, dir + "/front-" + t + ".yaml"));
    const double cpu0 = front.workers_cpu();
    dnsperf(front.port(), file, o.rate, dir + "/perf-" + t + ".log", run);
    const double cpu = front.workers_cpu() - cpu0;
    const nlohmann::json totals = front.totals();
    run.upstream_queries = total(totals, "upstream_queries");
    run.connections = total(totals, "upstream_connections");
    run.resumed = total(totals, "upstream_tls_resumed");
    run.servfail = total(totals, "servfail");
    run.timeouts = total(totals, "upstream_timeouts");
    run.cpu_us_per_miss = run.completed ? cpu * 1e6 / static_cast<double>(run.completed) : 0;
    runs.push_back(run);
  }

  // 4. The figures.
  const TransportRun* udp = nullptr;
  for (const TransportRun& r : runs)
    if (r.transport == "udp") udp = &r;
  nlohmann::json j;
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) == 3) j["load_average"] = {load[0], load[1], load[2]};
  j["misses"] = o.misses;
  j["rate_qps"] = o.rate;
  j["relay_warm_completed"] = warm.completed;
  j["runs"] = nlohmann::json::array();
  for (const TransportRun& r : runs) {
    nlohmann::json x{{"transport", r.transport},
                     {"sent", r.sent},
                     {"completed", r.completed},
                     {"lost", r.lost},
                     {"servfail", r.servfail},
                     {"upstream_queries", r.upstream_queries},
                     {"upstream_timeouts", r.timeouts},
                     {"avg_latency_ms", r.avg_latency_ms},
                     {"max_latency_ms", r.max_latency_ms},
                     {"cpu_us_per_miss", r.cpu_us_per_miss},
                     {"connections", r.connections},
                     {"connections_per_10k_misses",
                      r.upstream_queries ? 1e4 * static_cast<double>(r.connections) / static_cast<double>(r.upstream_queries)
                                         : 0.0},
                     {"tls_resumed", r.resumed}};
    if (udp && udp != &r && udp->avg_latency_ms > 0) x["latency_ratio_vs_udp"] = r.avg_latency_ms / udp->avg_latency_ms;
    if (udp && udp != &r && udp->cpu_us_per_miss > 0) x["cpu_ratio_vs_udp"] = r.cpu_us_per_miss / udp->cpu_us_per_miss;
    j["runs"].push_back(x);
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("dnsarena-lab bench upstream: %u misses at %u q/s per transport, front and relay 1 worker each "
              "(relay warm: %llu of %u answered)\n",
              o.misses, o.rate, static_cast<unsigned long long>(warm.completed), o.misses);
  std::printf("%-9s %9s %6s %8s %9s %9s %11s %12s %8s %9s %9s\n", "transport", "answered", "lost", "SERVFAIL",
              "avg ms", "max ms", "CPU us/miss", "connections", "per 10k", "resumed", "vs udp");
  for (const auto& x : j["runs"]) {
    char ratio[32] = "";
    if (x.contains("latency_ratio_vs_udp"))
      std::snprintf(ratio, sizeof ratio, "%.2fx lat", x["latency_ratio_vs_udp"].get<double>());
    std::printf("%-9s %9llu %6llu %8llu %9.3f %9.3f %11.1f %12llu %8.1f %9llu %9s\n",
                x["transport"].get<std::string>().c_str(), x["completed"].get<unsigned long long>(),
                x["lost"].get<unsigned long long>(), x["servfail"].get<unsigned long long>(),
                x["avg_latency_ms"].get<double>(), x["max_latency_ms"].get<double>(),
                x["cpu_us_per_miss"].get<double>(), x["connections"].get<unsigned long long>(),
                x["connections_per_10k_misses"].get<double>(), x["tls_resumed"].get<unsigned long long>(), ratio);
  }
  return 0;
}

}  // namespace

void add_bench_upstream_command(CLI::App& bench) {
  auto o = std::make_shared<UpstreamBenchOptions>();
  auto* cmd = bench.add_subcommand(
      "upstream",
      "Cache misses forwarded over each upstream transport (udp, tcp, tls: a forward zone's `transport`), the\n"
      "same names to the same warm relay (a serve with DoT in front of `sim upstream`) in one run: misses\n"
      "answered, latency, the front's CPU per miss, connections opened (per 10,000 misses) and TLS resumptions.");
  cmd->add_option("--misses", o->misses, "distinct names sent once each, per transport")
      ->check(CLI::Range(100u, 1000000u))
      ->capture_default_str();
  cmd->add_option("--rate", o->rate, "queries per second (dnsperf -Q)")->check(CLI::Range(10u, 100000u))->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the synthetic upstream's names")->capture_default_str();
  cmd->add_option("--transports", o->transports, "which, in this order (default udp tcp tls)")
      ->check(CLI::IsMember({"udp", "tcp", "tls"}));
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    const int rc = run_upstream_bench(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench

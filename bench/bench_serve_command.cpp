// `dnsarena bench serve`: the whole service under all-hit load from dnsperf, beside unbound.
//
// Steps (all processes on loopback, every child stopped at the end):
//   1. `dnsarena sim upstream` (the synthetic authoritative) and a dnsperf query file of
//      the same names (`dnsarena sim load --write-dnsperf`, Zipf stream).
//   2. serve with 1 worker, then 2: warm the cache (one pass of the file), then dnsperf for
//      --duration seconds. With 1 worker the worker is pinned to CPU 0 and dnsperf to CPU 1;
//      with 2 workers nothing is pinned and the client competes for the cores.
//      CPU time per answered query = the workers' utime+stime (/proc/PID/stat) over the run
//      divided by completed queries: the fair figure when client and server share cores.
//   3. `dnsarena sim load` at 80% of the 2-worker peak: lost queries and latency p99.
//   4. unbound (when installed), 1 then 2 threads, as a forwarding cache to the same
//      upstream, warmed with the same file, measured the same way.
// A run is "client bound" when dnsperf used >= 90% of one core (its rusage): then the
// queries/s measure the client, not the server.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bench/commands.hpp"
#include "common/child_process.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"
#include "common/proc_stats.hpp"

namespace dnsarena::bench {

namespace {

struct BenchOptions {
  double duration = 5;
  unsigned queries_in_file = 20000;
  unsigned seed = 1;
  unsigned clients = 4;
  bool json = false;
  bool no_unbound = false;
};

// fork + exec (PATH searched) with stdout and stderr to `log`, optionally pinned to one CPU.
common::ChildProcess spawn(const std::vector<std::string>& argv, const std::string& log, int cpu = -1) {
  return common::ChildProcess(argv, {.log_path = log, .truncate_log = true, .search_path = true, .cpu = cpu});
}

// Until something accepts TCP on `port` (up to 10 s); false when `child` exits first.
bool wait_tcp(std::uint16_t port, common::ChildProcess& child) {
  for (int i = 0; i < 500; ++i) {
    if (!child.running()) return false;
    if (common::accepts_tcp(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

double status_mb(pid_t pid, const char* key) { return static_cast<double>(common::status_kib(pid, key)) / 1024.0; }

struct PerfResult {
  double qps = 0, avg_latency_ms = 0, client_cpu_s = 0, wall_s = 0;
  std::uint64_t sent = 0, completed = 0, lost = 0;
  bool client_bound = false;
};

// Runs dnsperf to completion and parses its statistics.
PerfResult dnsperf(std::uint16_t port, const std::string& file, const std::vector<std::string>& extra,
                   const std::string& log, int cpu) {
  std::vector<std::string> argv{"dnsperf", "-s", "127.0.0.1", "-p", std::to_string(port), "-d", file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto t0 = std::chrono::steady_clock::now();
  common::ChildProcess perf = spawn(argv, log, cpu);
  rusage ru{};
  perf.wait(ru);
  PerfResult r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.client_cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                   static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::istringstream in(slurp(log));
  std::string line;
  auto num = [](const std::string& l) {
    const auto colon = l.find(':');
    return colon == std::string::npos ? 0.0 : std::stod(l.substr(colon + 1));
  };
  while (std::getline(in, line)) {
    const auto p = line.find_first_not_of(' ');
    if (p == std::string::npos) continue;
    const std::string l = line.substr(p);
    if (l.rfind("Queries sent:", 0) == 0) r.sent = static_cast<std::uint64_t>(num(l));
    else if (l.rfind("Queries completed:", 0) == 0) r.completed = static_cast<std::uint64_t>(num(l));
    else if (l.rfind("Queries lost:", 0) == 0) r.lost = static_cast<std::uint64_t>(num(l));
    else if (l.rfind("Queries per second:", 0) == 0) r.qps = num(l);
    else if (l.rfind("Average Latency (s):", 0) == 0) r.avg_latency_ms = num(l) * 1000.0;
  }
  if (r.sent == 0) throw std::runtime_error("dnsperf produced no statistics (see " + log + ")");
  r.client_bound = r.client_cpu_s >= 0.9 * r.wall_s;
  return r;
}

struct ServerRun {
  std::string name;
  PerfResult perf;
  double server_cpu_s = 0;
  double cpu_us_per_query = 0;
  double rss_mb_per_process = 0;      // VmRSS (includes the shared segment pages touched)
  double private_mb_per_process = 0;  // RssAnon
  bool pinned = false;
};

// Warms `port` with one pass of the file, then measures `pids` during a timed dnsperf run.
ServerRun measure(const std::string& name, std::uint16_t port, const std::vector<pid_t>& pids, const BenchOptions& o,
                  const std::string& file, const std::string& dir, bool pin) {
  ServerRun run;
  run.name = name;
  dnsperf(port, file, {"-n", "1", "-c", "4", "-q", "200"}, dir + "/warm-" + name + ".log", -1);
  if (pin)
    for (pid_t p : pids) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(0, &set);
      ::sched_setaffinity(p, sizeof set, &set);
    }
  run.pinned = pin;
  double before = 0;
  for (pid_t p : pids) before += common::cpu_seconds(p);
  run.perf = dnsperf(port, file,
                     {"-l", std::to_string(o.duration), "-c", std::to_string(o.clients), "-q", "500"},
                     dir + "/run-" + name + ".log", pin ? 1 : -1);
  for (pid_t p : pids) {
    run.server_cpu_s += common::cpu_seconds(p);
    run.rss_mb_per_process += status_mb(p, "VmRSS") / static_cast<double>(pids.size());
    run.private_mb_per_process += status_mb(p, "RssAnon") / static_cast<double>(pids.size());
  }
  run.server_cpu_s -= before;
  run.cpu_us_per_query = run.perf.completed ? run.server_cpu_s * 1e6 / static_cast<double>(run.perf.completed) : 0;
  return run;
}

bool have_program(const std::string& name) { return common::find_program(name).has_value(); }

// What every step shares: the program, the scratch directory, the query file and the
// synthetic upstream's address.
struct BenchSetup {
  std::string exe = common::self_executable();
  std::string dir = "/tmp/dnsarena-bench-serve-" + std::to_string(::getpid());
  std::string file = dir + "/queries.txt";
  std::uint16_t up_port = common::free_loopback_port();
  std::string upstream = "127.0.0.1:" + std::to_string(up_port);
  std::string seed;
};

// Step 1: the dnsperf query file (`sim load --write-dnsperf`).
bool write_query_file(const BenchSetup& s, const BenchOptions& o) {
  common::ChildProcess w = spawn({s.exe, "sim", "load", "--write-dnsperf", s.file, "--queries",
                                  std::to_string(o.queries_in_file), "--seed", s.seed},
                                 s.dir + "/write-names.log");
  if (w.wait() == 0) return true;
  std::cerr << "dnsarena bench serve: writing the query file failed: " << slurp(s.dir + "/write-names.log");
  return false;
}

// Step 3: `sim load` at 80% of `peak` against the server on `port`: its JSON, with the rate.
nlohmann::json load_at_80pct(const BenchSetup& s, const BenchOptions& o, std::uint16_t port, double peak) {
  const std::string log = s.dir + "/load80.log";
  common::ChildProcess l = spawn({s.exe, "sim", "load", "--server", "127.0.0.1:" + std::to_string(port), "--rate",
                                  std::to_string(0.8 * peak), "--duration", std::to_string(o.duration), "--seed",
                                  s.seed, "--json"},
                                 log);
  l.wait();
  try {
    const std::string text = slurp(log);
    nlohmann::json load80 = nlohmann::json::parse(text.substr(text.find('{')));
    load80["rate"] = 0.8 * peak;
    return load80;
  } catch (const std::exception& e) {
    return {{"error", std::string("sim load output not parsed: ") + e.what()}};
  }
}

// Step 2 (and 3 with 2 workers): serve with 1 then 2 workers, each warmed and measured.
// Throws std::runtime_error when serve does not start.
void measure_dnsarena(const BenchSetup& s, const BenchOptions& o, std::vector<ServerRun>& runs,
                      nlohmann::json& load80) {
  for (unsigned workers : {1u, 2u}) {
    const std::uint16_t port = common::free_loopback_port();
    const std::string segment = "dnsarena-bench-serve-" + std::to_string(::getpid());
    const std::string log = s.dir + "/serve-" + std::to_string(workers) + ".log";
    common::ChildProcess serve = spawn({s.exe, "serve", "--workers", std::to_string(workers), "--listen",
                                        "127.0.0.1:" + std::to_string(port), "--upstream", s.upstream, "--segment",
                                        segment, "--no-metrics", "--log-level", "warn", "--remove-segment",
                                        "--reset-segment", "--max-entries", "200000", "--arena-bytes", "64M"},
                                       log);
    if (!wait_tcp(port, serve)) {
      serve.stop();
      throw std::runtime_error("serve did not start: " + slurp(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every worker bound
    const auto pids = common::child_pids(serve.pid());
    runs.push_back(measure("dnsarena-" + std::to_string(workers) + "w", port, pids, o, s.file, s.dir, workers == 1));
    if (workers == 2) load80 = load_at_80pct(s, o, port, std::max(runs[0].perf.qps, runs[1].perf.qps));
    serve.stop();
  }
}

// unbound as a forwarding cache to the synthetic upstream, `threads` threads.
std::string write_unbound_conf(const BenchSetup& s, std::uint16_t port, unsigned threads) {
  const std::string conf = s.dir + "/unbound-" + std::to_string(threads) + ".conf";
  std::ofstream(conf) << "server:\n  interface: 127.0.0.1\n  port: " << port << "\n  num-threads: " << threads
                      << "\n  so-reuseport: yes\n  do-not-query-localhost: no\n  chroot: \"\"\n  username: \"\"\n"
                      << "  directory: \"" << s.dir << "\"\n  pidfile: \"\"\n  use-syslog: no\n  verbosity: 0\n"
                      << "  do-ip6: no\n  module-config: \"iterator\"\n  qname-minimisation: no\n"
                      << "  msg-cache-size: 64m\n  rrset-cache-size: 128m\n  access-control: 127.0.0.0/8 allow\n"
                      << "  outgoing-range: 1024\n  num-queries-per-thread: 1024\n"
                      << "forward-zone:\n  name: \".\"\n  forward-addr: " << "127.0.0.1@" << s.up_port << "\n";
  return conf;
}

// Step 4: unbound with 1 then 2 threads, measured as serve was. Throws when it does not start.
void measure_unbound(const BenchSetup& s, const BenchOptions& o, std::vector<ServerRun>& runs) {
  for (unsigned threads : {1u, 2u}) {
    const std::uint16_t port = common::free_loopback_port();
    const std::string log = s.dir + "/unbound-" + std::to_string(threads) + ".log";
    common::ChildProcess ub = spawn({"unbound", "-d", "-c", write_unbound_conf(s, port, threads)}, log);
    if (!wait_tcp(port, ub)) {
      ub.stop();
      throw std::runtime_error("unbound did not start: " + slurp(log));
    }
    const std::string name = "unbound-" + std::to_string(threads) + "t";
    runs.push_back(measure(name, port, {ub.pid()}, o, s.file, s.dir, threads == 1));
    ub.stop();
  }
}

// The figures as one JSON object (the --json output; the table reads it too).
nlohmann::json summarize(const std::vector<ServerRun>& runs, const nlohmann::json& load80, const BenchOptions& o) {
  auto find = [&](const std::string& n) -> const ServerRun* {
    for (const auto& r : runs)
      if (r.name == n) return &r;
    return nullptr;
  };
  const ServerRun* d1 = find("dnsarena-1w");
  const ServerRun* d2 = find("dnsarena-2w");
  const ServerRun* u1 = find("unbound-1t");
  const ServerRun* u2 = find("unbound-2t");
  nlohmann::json j;
  j["qps_1worker"] = d1->perf.qps;
  j["qps_2workers"] = d2->perf.qps;
  j["cpu_us_per_query"] = d1->cpu_us_per_query;
  j["cpu_us_per_query_2workers"] = d2->cpu_us_per_query;
  j["unbound_qps"] = u2 ? nlohmann::json(std::max(u1->perf.qps, u2->perf.qps)) : nlohmann::json(nullptr);
  j["unbound_qps_1thread"] = u1 ? nlohmann::json(u1->perf.qps) : nlohmann::json(nullptr);
  j["unbound_qps_2threads"] = u2 ? nlohmann::json(u2->perf.qps) : nlohmann::json(nullptr);
  j["unbound_cpu_us_per_query"] = u1 ? nlohmann::json(u1->cpu_us_per_query) : nlohmann::json(nullptr);
  // > 1: dnsarena needs less CPU per query than unbound (target: >= 3).
  j["ratio_vs_unbound"] =
      u1 && d1->cpu_us_per_query > 0 ? nlohmann::json(u1->cpu_us_per_query / d1->cpu_us_per_query) : nlohmann::json(nullptr);
  j["qps_ratio_vs_unbound"] = u1 ? nlohmann::json(d1->perf.qps / u1->perf.qps) : nlohmann::json(nullptr);
  std::uint64_t lost = 0;
  for (const auto& r : runs)
    if (r.name.rfind("dnsarena", 0) == 0) lost += r.perf.lost;
  j["lost"] = lost;
  j["load_at_80pct_peak"] = load80;
  j["latency_ms_p99"] = load80.contains("latency_ms") && load80["latency_ms"].contains("p99")
                            ? load80["latency_ms"]["p99"]
                            : (load80.contains("latency_ms_p99") ? load80["latency_ms_p99"] : nlohmann::json(nullptr));
  j["rss_mb_per_worker"] = d2->rss_mb_per_process;
  j["private_mb_per_worker"] = d2->private_mb_per_process;
  j["client_bound"] = d2->perf.client_bound;
  j["duration_s"] = o.duration;
  j["runs"] = nlohmann::json::array();
  for (const auto& r : runs)
    j["runs"].push_back({{"name", r.name}, {"qps", r.perf.qps}, {"completed", r.perf.completed},
                         {"lost", r.perf.lost}, {"avg_latency_ms", r.perf.avg_latency_ms},
                         {"server_cpu_s", r.server_cpu_s}, {"cpu_us_per_query", r.cpu_us_per_query},
                         {"client_cpu_s", r.perf.client_cpu_s}, {"client_bound", r.perf.client_bound},
                         {"pinned", r.pinned}, {"rss_mb", r.rss_mb_per_process}, {"private_mb", r.private_mb_per_process}});
  return j;
}

void print_table(const std::vector<ServerRun>& runs, const nlohmann::json& j, const BenchOptions& o) {
  std::printf("dnsarena bench serve: %.0f s per run, %u queries in the file, dnsperf -c %u\n", o.duration,
              o.queries_in_file, o.clients);
  std::printf("%-14s %10s %9s %7s %10s %10s %9s %8s %9s %s\n", "server", "q/s", "answered", "lost", "avg ms",
              "cpu us/q", "rss MB", "anon MB", "client%", "note");
  for (const auto& r : runs)
    std::printf("%-14s %10.0f %9llu %7llu %10.3f %10.2f %9.1f %8.1f %8.0f%% %s\n", r.name.c_str(), r.perf.qps,
                static_cast<unsigned long long>(r.perf.completed), static_cast<unsigned long long>(r.perf.lost),
                r.perf.avg_latency_ms, r.cpu_us_per_query, r.rss_mb_per_process, r.private_mb_per_process,
                100.0 * r.perf.client_cpu_s / r.perf.wall_s,
                r.perf.client_bound ? "client-bound (dnsperf saturated a core)"
                                    : (r.pinned ? "server on CPU 0, dnsperf on CPU 1" : "unpinned"));
  std::printf("load at 80%% of peak: %s\n", j["load_at_80pct_peak"].dump().c_str());
  if (!j["ratio_vs_unbound"].is_null())
    std::printf("CPU per query vs unbound (1 worker vs 1 thread): %.2fx less (target >= 3x); q/s %.2fx\n",
                j["ratio_vs_unbound"].get<double>(), j["qps_ratio_vs_unbound"].get<double>());
  else
    std::printf("unbound not installed or skipped: no comparison\n");
}

int run_bench(const BenchOptions& o) {
  if (!have_program("dnsperf")) {
    std::cerr << "dnsarena bench serve: dnsperf is not installed (apt-get install dnsperf)\n";
    return 2;
  }
  BenchSetup s;
  s.seed = std::to_string(o.seed);
  ::mkdir(s.dir.c_str(), 0700);
  if (!write_query_file(s, o)) return 1;
  common::ChildProcess up = spawn({s.exe, "sim", "upstream", "--port", std::to_string(s.up_port), "--seed", s.seed},
                                  s.dir + "/upstream.log");
  if (!wait_tcp(s.up_port, up)) {
    std::cerr << "dnsarena bench serve: the synthetic upstream did not start: " << slurp(s.dir + "/upstream.log");
    up.stop();
    return 1;
  }
  std::vector<ServerRun> runs;
  nlohmann::json load80;
  std::string error;
  try {
    measure_dnsarena(s, o, runs, load80);
    if (!o.no_unbound && have_program("unbound")) measure_unbound(s, o, runs);
  } catch (const std::exception& e) {
    error = e.what();
  }
  up.stop();
  if (!error.empty()) {
    std::cerr << "dnsarena bench serve: " << error << "\n";
    return 1;
  }
  const nlohmann::json j = summarize(runs, load80, o);
  if (o.json) std::cout << j.dump() << "\n";
  else print_table(runs, j, o);
  return 0;
}

}  // namespace

void add_bench_serve_command(CLI::App& bench) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = bench.add_subcommand(
      "serve",
      "The service under all-hit load: serve with 1 and 2 workers plus the synthetic upstream, warmed,\n"
      "then dnsperf; queries/s, latency, losses, workers' CPU time per answered query; the same for\n"
      "unbound (1 and 2 threads) as a forwarding cache when installed; sim load at 80% of peak.");
  cmd->add_option("--duration", o->duration, "seconds per measured run (default 5)")->check(CLI::Range(0.5, 600.0));
  cmd->add_option("--queries", o->queries_in_file, "queries in the dnsperf file (default 20000)")
      ->check(CLI::Range(100u, 10000000u));
  cmd->add_option("--seed", o->seed, "seed of the upstream's names (default 1)");
  cmd->add_option("--clients", o->clients, "dnsperf -c (default 4)")->check(CLI::Range(1u, 256u));
  cmd->add_flag("--no-unbound", o->no_unbound, "skip the unbound comparison");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    const int rc = run_bench(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench

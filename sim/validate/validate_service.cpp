// SPDX-License-Identifier: GPL-3.0-or-later
#include "validate_service.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cache/cache.hpp"
#include "validate_process.hpp"
#include "workers/serve_config.hpp"
#include "workers/stats_report.hpp"
#include "common/child_process.hpp"
#include "common/loopback.hpp"

namespace dnsarena::sim::fleet {

namespace {

using Clock = std::chrono::steady_clock;

// Removes the segment when the run ends however it ends (serve removes it too on a clean
// stop; this covers a serve that was killed).
struct SegmentRemover {
  std::string name;
  ~SegmentRemover() {
    try {
      cache::Segment::remove(name);
    } catch (...) {
    }
  }
};

void check_interrupted() {
  if (validate_interrupted().load()) throw std::runtime_error("interrupted: children stopped, segment removed");
}

void require_running(common::ChildProcess& child, const std::string& what) {
  if (!child.running())
    throw std::runtime_error(what + " ended early (" + child.exit_status() + "); log " + child.log_path() + ":\n" +
                             child.log_tail());
}

// Waits until `port` accepts TCP, `child` staying alive.
void wait_listening(common::ChildProcess& child, std::uint16_t port, const std::string& what, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!common::accepts_tcp(port)) {
    check_interrupted();
    require_running(child, what);
    if (Clock::now() > deadline)
      throw std::runtime_error(what + " does not accept connections on port " + std::to_string(port) + " after " +
                               std::to_string(limit.count()) + " s; log:\n" + child.log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ServiceSample take_sample(cache::Cache& cache, pid_t supervisor, const std::string& segment) {
  const workers::StatsReport rep = workers::collect_stats(cache);
  ServiceSample s;
  s.entries = rep.cache.live_entries;
  s.queries = rep.total.queries();
  s.hits = rep.total.get(cache::Counter::hits);
  s.lookups = rep.total.get(cache::Counter::lookups);
  s.servfail = rep.total.get(cache::Counter::servfail);
  s.inserts = rep.total.get(cache::Counter::inserts);
  s.second_chances = rep.total.get(cache::Counter::second_chances);
  s.stale_answers = rep.total.get(cache::Counter::stale_answers);
  s.failure_cached = rep.total.get(cache::Counter::failure_cached);
  s.deadline_answers = rep.total.get(cache::Counter::deadline_answers);
  s.prefetches = rep.total.get(cache::Counter::prefetches);
  s.arena_bytes_in_use = rep.cache.bytes_in_use;
  for (pid_t pid : common::child_pids(supervisor)) {
    const Pss p = pss_of(pid);
    s.pss += p;
    s.processes += p.total ? 1 : 0;
  }
  const Pss p = pss_of(supervisor);
  s.pss += p;
  s.processes += p.total ? 1 : 0;
  s.segment_resident_bytes = shm_resident_bytes(segment);
  return s;
}

// The load's JSON report: the last line of its log that parses as an object.
nlohmann::json load_report(const common::ChildProcess& load) {
  std::ifstream in(load.log_path());
  std::string line;
  nlohmann::json found;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() != '{') continue;
    try {
      found = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
    }
  }
  if (!found.is_object()) throw std::runtime_error("sim load printed no JSON report; log:\n" + load.log_tail());
  return found;
}

std::uint64_t rcode_count(const nlohmann::json& load, const char* name) {
  const auto& rc = load.at("rcodes");
  return rc.contains(name) ? rc.at(name).get<std::uint64_t>() : 0;
}

// Sends `sim upstream` its black-hole switch (SIGUSR1 silent, SIGUSR2 answering) and
// checks that it is still there: without the switch the signal's default action ends it.
void switch_upstream(common::ChildProcess& upstream, int signal, const std::string& what) {
  if (::kill(upstream.pid(), signal) != 0)
    throw std::runtime_error("cannot signal sim upstream to " + what + ": " + std::strerror(errno));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!upstream.running())
    throw std::runtime_error("sim upstream ended on the signal to " + what + " (" + upstream.exit_status() +
                             "): this build's `sim upstream` has no black-hole switch (SIGUSR1/SIGUSR2); "
                             "run with --outage 0");
}

}  // namespace

std::atomic<bool>& validate_interrupted() {
  static std::atomic<bool> flag{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
  return flag;
}

ServiceRun run_service(const ServiceOptions& o) {
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  if (o.minute_s < 1 || o.minute_s > 60) throw std::invalid_argument("minute_s must be 1..60 real seconds");
  const double scale = o.minute_s / 60.0;  // real seconds per simulated second
  // A wait that spans minutes on the compressed clock: whole units, at least 1.
  auto scaled = [&](double v) { return std::max<long long>(1, std::llround(v * scale)); };
  static unsigned counter = 0;
  ServiceRun run;
  run.segment = "dnsarena-validate-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const SegmentRemover remover{run.segment};
  cache::Segment::remove(run.segment);
  const auto wall0 = Clock::now();
  std::vector<std::string> profile_args;
  if (!o.profile_path.empty()) profile_args = {"--profile", o.profile_path};
  const std::string seed = std::to_string(o.seed);

  // 1. The synthetic upstream.
  const std::uint16_t up_port = common::free_loopback_port();
  std::vector<std::string> up_argv = {o.program, "sim", "upstream", "--port", std::to_string(up_port), "--seed", seed};
  up_argv.insert(up_argv.end(), profile_args.begin(), profile_args.end());
  if (o.minute_s != 60) {
    up_argv.push_back("--ttl-scale");
    up_argv.push_back(std::to_string(scale));
  }
  common::ChildProcess upstream(up_argv, {.log_path = o.work_dir + "/upstream.log", .die_with_parent = true});
  wait_listening(upstream, up_port, "sim upstream", std::chrono::seconds(60));
  say("sim upstream on 127.0.0.1:" + std::to_string(up_port));

  // 2. The service. The model's stale window and prefetch are given to serve as they are
  // to the model; a serve that rejects a key does not start, and its log says why.
  const std::string config = o.work_dir + "/serve.yaml";
  const std::string stale_key = "stale: {max_age_s: " + std::to_string(scaled(o.stale_max_age_s)) + "}";
  const std::string prefetch_key = "prefetch: {percent: " + std::to_string(o.prefetch_percent) + "}";
  // A compressed clock compresses serve's own waits that span minutes too: how often a
  // down upstream is probed (so the service comes back as soon after the outage, in
  // minutes, as it would in real time) and how long a failing name is left alone.
  std::string clock_keys;
  if (o.minute_s != 60) {
    const workers::UpstreamHealthConfig h;
    const workers::ServeConfig defaults;
    clock_keys = "upstream_health: {down_backoff_initial_ms: " + std::to_string(scaled(h.down_backoff_initial_ms)) +
                 ", down_backoff_max_ms: " + std::to_string(scaled(h.down_backoff_max_ms)) +
                 "}\nfailure_cache: {min_s: 1, max_s: " + std::to_string(scaled(defaults.failure_max_s)) + "}";
  }
  {
    std::ofstream c(config);
    c << "# written by dnsarena-lab sim validate: the fleet model's region size (serve has no flag)\n"
      << "cache:\n  region_bytes: " << o.region_bytes << "\n";
    if (!clock_keys.empty()) c << "# the compressed clock (a minute lasts " << o.minute_s << " s)\n" << clock_keys << "\n";
    c << "# the model's stale window\n" << stale_key << "\n";
    c << "# the model's prefetch\n" << prefetch_key << "\n";
    if (!c) throw std::runtime_error("cannot write " + config);
  }
  const std::uint16_t port = common::free_loopback_port();
  const std::vector<std::string> serve_argv = {o.daemon, "serve", "--config", config,
                                               "--listen", "127.0.0.1:" + std::to_string(port),
                                               "--upstream", "127.0.0.1:" + std::to_string(up_port),
                                               "--workers", std::to_string(o.workers),
                                               "--segment", run.segment,
                                               "--max-entries", std::to_string(o.capacity),
                                               "--arena-bytes", std::to_string(o.arena_bytes),
                                               "--ecs", o.ecs_forward ? "forward" : "off",
                                               "--no-metrics", "--remove-segment", "--reset-segment",
                                               "--log-level", "warn"};
  common::ChildProcess serve(serve_argv, {.log_path = o.work_dir + "/serve.log", .die_with_parent = true});
  wait_listening(serve, port, "dnsarena serve", std::chrono::seconds(30));
  // Every worker up (each one opens its own socket; the first to listen answers TCP).
  const auto workers_deadline = Clock::now() + std::chrono::seconds(10);
  while (common::child_pids(serve.pid()).size() < o.workers && Clock::now() < workers_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // workers settle (attach, first allocations)
  require_running(serve, "dnsarena serve");
  std::optional<cache::Segment> seg;
  seg.emplace(cache::Segment::attach(run.segment));
  std::optional<cache::Cache> cache;
  cache.emplace(*seg, cache::SlotRole::tool);
  {
    const cache::CacheStats st = cache->stats();
    run.segment_bytes = st.segment_bytes;
    run.index_bytes = st.index_bytes;
    run.arena_bytes = st.arena_bytes;
  }
  run.before_load = take_sample(*cache, serve.pid(), run.segment);
  run.before_load.t_s = -1;
  say("dnsarena serve on 127.0.0.1:" + std::to_string(port) + ", " + std::to_string(o.workers) +
      " workers, segment " + run.segment + " (" + std::to_string(run.segment_bytes >> 10) + " KiB), Pss " +
      std::to_string(run.before_load.memory_bytes() >> 10) + " KiB anon+shmem before load");

  // 3. The load, and time 0 at the first query counted.
  const double load_real_s = o.duration_s * scale;
  std::vector<std::string> load_argv = {o.program, "sim", "load", "--server", "127.0.0.1:" + std::to_string(port),
                                        "--rate", std::to_string(o.rate), "--duration",
                                        std::to_string(load_real_s), "--seed", seed, "--json"};
  load_argv.insert(load_argv.end(), profile_args.begin(), profile_args.end());
  common::ChildProcess load(load_argv, {.log_path = o.work_dir + "/load.log", .die_with_parent = true});
  const auto first_deadline = Clock::now() + std::chrono::seconds(60);
  while (workers::collect_stats(*cache).total.queries() == 0) {
    check_interrupted();
    require_running(serve, "dnsarena serve");
    if (!load.running() && load.exit_code() != 0)
      throw std::runtime_error("sim load failed (" + load.exit_status() + "); log:\n" + load.log_tail());
    if (Clock::now() > first_deadline) throw std::runtime_error("no query reached the service within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto t0 = Clock::now() - std::chrono::milliseconds(25);  // the poll's mean delay
  say("load started: " + std::to_string(o.rate) + " q/s for " + std::to_string(o.duration_s) + " s" +
      (o.minute_s != 60 ? " simulated (" + std::to_string(load_real_s) + " s real: a minute lasts " +
                              std::to_string(o.minute_s) + " s)"
                        : std::string()));
  for (std::uint32_t k = 0; k * o.sample_every_s <= o.duration_s; ++k) {
    const auto at = t0 + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(k * o.sample_every_s * scale));
    while (Clock::now() < at) {
      check_interrupted();
      std::this_thread::sleep_for(std::min<Clock::duration>(at - Clock::now(), std::chrono::milliseconds(100)));
    }
    require_running(serve, "dnsarena serve");
    ServiceSample s = take_sample(*cache, serve.pid(), run.segment);
    s.t_s = std::chrono::duration<double>(Clock::now() - t0).count() / scale;
    run.samples.push_back(s);
    if (o.outage_s > 0 && k * o.sample_every_s == o.outage_at_s) {
      switch_upstream(upstream, SIGUSR1, "stop answering");
      run.outage_first_sample = run.samples.size() - 1;
      say("t=" + std::to_string(o.outage_at_s) + " s: upstream silenced (SIGUSR1) for " + std::to_string(o.outage_s) + " s");
    } else if (o.outage_s > 0 && k * o.sample_every_s == o.outage_at_s + o.outage_s) {
      switch_upstream(upstream, SIGUSR2, "answer again");
      run.outage_last_sample = run.samples.size() - 1;
      say("t=" + std::to_string(o.outage_at_s + o.outage_s) + " s: upstream answers again (SIGUSR2)");
    }
    if (k > 0 && (k * o.sample_every_s) % 60 == 0)
      say("t=" + std::to_string(k * o.sample_every_s) + " s: " + std::to_string(s.entries) + " entries, Pss " +
          std::to_string(s.memory_bytes() >> 10) + " KiB");
  }
  // The load ends after its timeout for the last queries (2 s) and prints its report.
  while (!load.wait_exit(std::chrono::milliseconds(200))) {
    check_interrupted();
    if (Clock::now() - t0 > std::chrono::duration<double>(load_real_s + 120))
      throw std::runtime_error("sim load did not finish 120 s after its duration; log:\n" + load.log_tail());
  }
  if (load.exit_code() != 0)
    throw std::runtime_error("sim load failed (" + load.exit_status() + "); log:\n" + load.log_tail());
  run.load = load_report(load);
  run.sent = run.load.at("sent").get<std::uint64_t>();
  run.answered = run.load.at("answered").get<std::uint64_t>();
  run.lost = run.load.at("lost").get<std::uint64_t>();
  run.servfail_answers = rcode_count(run.load, "SERVFAIL");
  run.achieved_qps = run.load.at("achieved_qps").get<double>();
  run.wall_s = std::chrono::duration<double>(Clock::now() - wall0).count();
  cache.reset();
  seg.reset();
  serve.stop();
  upstream.stop();
  return run;
}

}  // namespace dnsarena::sim::fleet

#include "workers/supervisor.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <spdlog/spdlog.h>
#include <vector>

#include "cache/cache.hpp"
#include "workers/metrics_server.hpp"
#include "workers/upstream_client.hpp"
#include "workers/worker.hpp"

namespace dnsarena::workers {

namespace {

struct WorkerProc {
  pid_t pid = 0;
  std::uint64_t started_ms = 0;
  std::uint64_t restart_at_ms = 0;  // when pid == 0: fork at this time
  unsigned backoff_ms = 0;
};

std::uint64_t now_ms() { return monotonic_us() / 1000; }

pid_t spawn(const ServeConfig& cfg, unsigned index, const sigset_t& old_mask) {
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    int rc = kWorkerExitConfig;
    try {
      rc = run_worker(cfg, index);
    } catch (const std::exception& e) {
      spdlog::error("worker {}: {}", index, e.what());
      rc = 1;
    }
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return pid;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// The slot the dead worker used: role worker, its index, preferably still marked with its pid.
cache::StatSlot* slot_of(cache::Segment& seg, unsigned index, pid_t pid) {
  cache::StatSlot* fallback = nullptr;
  for (std::uint32_t i = 0; i < seg.layout().stat_slots; ++i) {
    cache::StatSlot& s = seg.stat_slots()[i];
    if (s.role != static_cast<std::uint32_t>(cache::SlotRole::worker) || s.worker_index != index) continue;
    if (s.owner_pid.load(std::memory_order_relaxed) == static_cast<std::uint32_t>(pid)) return &s;
    if (!fallback) fallback = &s;
  }
  return fallback;
}

}  // namespace

int run_supervisor(const ServeConfig& cfg, const SupervisorOptions& opt) {
  cfg.validate();
  std::unique_ptr<cache::Segment> seg;
  cache::OpenOutcome outcome{};
  try {
    seg = std::make_unique<cache::Segment>(cache::Segment::open(
        cfg.segment, cfg.geometry, cfg.reset_on_mismatch ? cache::OpenPolicy::reset : cache::OpenPolicy::refuse,
        &outcome));
  } catch (const cache::SegmentError& e) {
    spdlog::error("segment '{}': {}{}", cfg.segment, e.what(),
                  e.kind() == cache::SegmentError::Kind::geometry_mismatch ||
                          e.kind() == cache::SegmentError::Kind::version_mismatch
                      ? " (set cache.reset_on_mismatch or pass --reset-segment to start a fresh one)"
                      : "");
    return 1;
  }
  cache::Cache cache(*seg, cache::SlotRole::supervisor);
  const char* what = outcome == cache::OpenOutcome::created    ? "created"
                     : outcome == cache::OpenOutcome::attached ? "re-attached (warm)"
                                                               : "recreated (format or geometry changed)";
  spdlog::info("segment '{}' {}: {} live entries, {} MiB", cfg.segment, what, cache.stats().live_entries,
               seg->size() >> 20);

  for (bool tcp : {false, true}) {
    const int fd = open_listen_socket(cfg, tcp);
    if (fd < 0) {
      spdlog::error("cannot bind {} {}: {}", tcp ? "TCP" : "UDP", cfg.listen.text, std::strerror(errno));
      return 1;
    }
    ::close(fd);
  }

  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &mask, &old_mask);

  std::unique_ptr<MetricsServer> metrics;
  if (!cfg.metrics_listen.empty()) {
    try {
      metrics = std::make_unique<MetricsServer>(*seg, Endpoint::parse(cfg.metrics_listen));
      spdlog::info("metrics on http://{}/metrics", cfg.metrics_listen);
    } catch (const std::exception& e) {
      spdlog::error("metrics endpoint {}: {}", cfg.metrics_listen, e.what());
      ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      return 1;
    }
  }

  const unsigned n = cfg.resolved_workers();
  std::vector<WorkerProc> workers(n);
  for (unsigned i = 0; i < n; ++i) {
    workers[i].pid = spawn(cfg, i, old_mask);
    workers[i].started_ms = now_ms();
    workers[i].backoff_ms = cfg.backoff_initial_ms;
  }
  std::string zones;
  for (const ForwardZone& z : cfg.zones())
    zones += (zones.empty() ? "" : "; ") + z.text + " -> " + z.upstreams.front().text +
             (z.upstreams.size() > 1 ? " and others" : "");
  spdlog::info("serving DNS on {} (UDP and TCP) with {} workers; forwarding {}", cfg.listen.text, n, zones);

  int exit_code = 0;
  bool stopping = false;
  while (!stopping) {
    // Sleep until a signal or the next scheduled restart.
    std::uint64_t wait_ms = 1000;
    const std::uint64_t t = now_ms();
    for (const auto& w : workers)
      if (w.pid == 0) wait_ms = std::min(wait_ms, w.restart_at_ms > t ? w.restart_at_ms - t : 0);
    timespec ts{static_cast<time_t>(wait_ms / 1000), static_cast<long>(wait_ms % 1000) * 1000000L};
    const int sig = ::sigtimedwait(&mask, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("signal {}: stopping", strsignal(sig));
      stopping = true;
      break;
    }
    // Reap (SIGCHLD, or periodically in case signals were merged).
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      for (unsigned i = 0; i < n; ++i) {
        WorkerProc& w = workers[i];
        if (w.pid != pid) continue;
        w.pid = 0;
        if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitConfig) {
          spdlog::error("worker {} (pid {}) cannot run (see above); stopping the service", i, pid);
          stopping = true;
          exit_code = 1;
          break;
        }
        const std::uint64_t ran = now_ms() - w.started_ms;
        if (ran > 10000) w.backoff_ms = cfg.backoff_initial_ms;
        if (cache::StatSlot* s = slot_of(*seg, i, pid)) s->add(cache::Counter::restarts);
        else cache.my_stats().add(cache::Counter::restarts);
        spdlog::warn("worker {} (pid {}) {} after {} ms; restarting in {} ms", i, pid, describe_status(status), ran,
                     w.backoff_ms);
        w.restart_at_ms = now_ms() + w.backoff_ms;
        w.backoff_ms = std::min(w.backoff_ms * 2, cfg.backoff_max_ms);
      }
    }
    if (stopping) break;
    for (unsigned i = 0; i < n; ++i) {
      WorkerProc& w = workers[i];
      if (w.pid == 0 && now_ms() >= w.restart_at_ms) {
        w.pid = spawn(cfg, i, old_mask);
        w.started_ms = now_ms();
        spdlog::info("worker {} restarted as pid {}", i, w.pid);
      }
    }
  }

  for (const auto& w : workers)
    if (w.pid > 0) ::kill(w.pid, SIGTERM);
  const std::uint64_t deadline = now_ms() + 5000;
  for (;;) {
    bool any = false;
    for (auto& w : workers) {
      if (w.pid <= 0) continue;
      int status = 0;
      const pid_t r = ::waitpid(w.pid, &status, WNOHANG);
      if (r == w.pid || (r < 0 && errno == ECHILD)) w.pid = 0;
      else any = true;
    }
    if (!any) break;
    if (now_ms() > deadline) {
      for (auto& w : workers)
        if (w.pid > 0) {
          spdlog::warn("worker pid {} ignored SIGTERM for 5 s: SIGKILL", w.pid);
          ::kill(w.pid, SIGKILL);
          ::waitpid(w.pid, nullptr, 0);
          w.pid = 0;
        }
      break;
    }
    ::usleep(10000);
  }
  metrics.reset();
  const auto live = cache.stats().live_entries;
  if (opt.remove_segment) {
    cache::Segment::remove(cfg.segment);
    spdlog::info("stopped; segment '{}' removed", cfg.segment);
  } else {
    spdlog::info("stopped; segment '{}' kept with {} live entries for the next start", cfg.segment, live);
  }
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return exit_code;
}

}  // namespace dnsarena::workers

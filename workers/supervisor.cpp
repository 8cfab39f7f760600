#include "workers/supervisor.hpp"

#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
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
  int beat_fd = -1;                 // read end of the worker's heartbeat pipe
  std::uint64_t last_beat_ms = 0;
  bool killed_silent = false;       // we killed it for not beating
};

std::uint64_t now_ms() { return monotonic_us() / 1000; }

// The descriptor ceiling we raise the soft limit to (never above the hard limit). Each
// worker holds up to tcp.max_connections client sockets plus one socket per upstream
// query in flight; 65,536 is far above both at their defaults while keeping a runaway
// leak visible (and select()-era tools sane) on hosts whose hard limit is 1M or infinite.
constexpr rlim_t kNofileCeiling = 65536;

// Raises RLIMIT_NOFILE's soft limit to min(hard, kNofileCeiling) before the workers are
// forked (they inherit it): the default soft limit of 1,024 is what a flood of misses or
// TCP clients exhausts first.
void raise_nofile_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t target = lim.rlim_max == RLIM_INFINITY ? kNofileCeiling : std::min(lim.rlim_max, kNofileCeiling);
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur >= target) return;
  const rlim_t before = lim.rlim_cur;
  lim.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &lim) == 0)
    spdlog::info("file descriptors: soft limit raised from {} to {} (hard limit {})", before, target,
                 lim.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(lim.rlim_max));
  else
    spdlog::warn("file descriptors: cannot raise the soft limit from {}: {}", before, std::strerror(errno));
}

// Forks worker `index` on its UDP socket and the shared TCP listener, with a fresh
// heartbeat pipe. The sockets stay the supervisor's (see WorkerSockets).
void spawn(const ServeConfig& cfg, unsigned index, const sigset_t& old_mask, const std::vector<int>& udp_fds,
           int tcp_fd, InFlightNames& names, WorkerProc& w) {
  int beat[2] = {-1, -1};
  if (::pipe2(beat, O_CLOEXEC | O_NONBLOCK) != 0) spdlog::warn("worker {}: no heartbeat pipe: {}", index, std::strerror(errno));
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    for (unsigned i = 0; i < udp_fds.size(); ++i)
      if (i != index) ::close(udp_fds[i]);  // another worker's queue is not ours to read
    if (beat[0] >= 0) ::close(beat[0]);
    int rc = kWorkerExitConfig;
    try {
      rc = run_worker(cfg, index, WorkerSockets{udp_fds[index], tcp_fd, beat[1], &names});
    } catch (const std::exception& e) {
      spdlog::error("worker {}: {}", index, e.what());
      rc = 1;
    }
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (beat[1] >= 0) ::close(beat[1]);
  if (w.beat_fd >= 0) ::close(w.beat_fd);
  w.beat_fd = beat[0];
  w.pid = pid;
  w.started_ms = w.last_beat_ms = now_ms();
  w.killed_silent = false;
}

// Reads every heartbeat byte waiting; kills a worker silent for longer than the timeout
// (stopped, traced, frozen or hung): its death is then handled as any other, and its
// replacement resumes the same UDP socket. Returns how many were killed.
unsigned check_heartbeats(const ServeConfig& cfg, std::vector<WorkerProc>& workers) {
  unsigned killed = 0;
  const std::uint64_t t = now_ms();
  for (unsigned i = 0; i < workers.size(); ++i) {
    WorkerProc& w = workers[i];
    if (w.pid <= 0 || w.beat_fd < 0) continue;
    char buf[64];
    while (::read(w.beat_fd, buf, sizeof buf) > 0) w.last_beat_ms = t;
    if (cfg.heartbeat_timeout_ms == 0 || w.killed_silent || t - w.last_beat_ms <= cfg.heartbeat_timeout_ms) continue;
    spdlog::error("worker {} (pid {}) stopped answering: no heartbeat for {} ms; killing it", i, w.pid,
                  t - w.last_beat_ms);
    ::kill(w.pid, SIGKILL);
    w.killed_silent = true;
    ++killed;
  }
  return killed;
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
  raise_nofile_limit();
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

  // The listening sockets are ours for the service's life: one UDP socket per worker
  // index (a restarted worker resumes its queue) and one TCP listener for all.
  const unsigned n = cfg.resolved_workers();
  std::vector<int> udp_fds;
  int tcp_fd = -1;
  auto close_sockets = [&] {
    for (int fd : udp_fds) ::close(fd);
    if (tcp_fd >= 0) ::close(tcp_fd);
  };
  for (unsigned i = 0; i <= n; ++i) {
    const bool tcp = i == n;
    const int fd = open_listen_socket(cfg, tcp);
    if (fd < 0) {
      spdlog::error("cannot bind {} {}: {}", tcp ? "TCP" : "UDP", cfg.listen.text, std::strerror(errno));
      close_sockets();
      return 1;
    }
    if (tcp) tcp_fd = fd;
    else udp_fds.push_back(fd);
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
      close_sockets();
      return 1;
    }
  }

  // Shared with every worker by fork: the per-name bound across workers.
  InFlightNames in_flight_names(n, true);
  std::vector<WorkerProc> workers(n);
  for (unsigned i = 0; i < n; ++i) {
    spawn(cfg, i, old_mask, udp_fds, tcp_fd, in_flight_names, workers[i]);
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
    std::uint64_t wait_ms = cfg.heartbeat_timeout_ms ? kHeartbeatMs : 1000;
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
    if (check_heartbeats(cfg, workers) > 0) cache.my_stats().add(cache::Counter::workers_killed_silent);
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
        if (ran > 10000 || w.killed_silent) w.backoff_ms = cfg.backoff_initial_ms;
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
        spawn(cfg, i, old_mask, udp_fds, tcp_fd, in_flight_names, w);
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
  for (auto& w : workers)
    if (w.beat_fd >= 0) ::close(w.beat_fd);
  close_sockets();
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

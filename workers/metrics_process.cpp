// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/metrics_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>

#include "common/monotonic_clock.hpp"
#include "workers/metrics_server.hpp"

namespace dnsarena::workers {

namespace {

// The child: serves until SIGTERM, SIGINT or the supervisor's death. Writes its word to
// `report` ("" and EOF once it serves, else why not) and never returns.
[[noreturn]] void serve_metrics(int report, pid_t supervisor, cache::Segment& segment, const Endpoint& listen,
                                const UpstreamHealth* health, const AnswerMetrics* answers,
                                const MissRatioCurves* curves) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != supervisor) ::_exit(0);  // the supervisor died before the line above
  ::prctl(PR_SET_NAME, kMetricsProcessName);  // what ps and /proc/PID/comm show
  // The supervisor's mask blocks these, so the HTTP threads inherit it blocked and this
  // thread takes them with sigwait.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  std::unique_ptr<MetricsServer> server;
  std::string why;
  try {
    server = std::make_unique<MetricsServer>(segment, listen, health, answers, curves);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) (void)!::write(report, why.data(), why.size());
  ::close(report);
  if (!server) ::_exit(1);
  int sig = 0;
  while (::sigwait(&stop, &sig) != 0) {
  }
  server.reset();  // stops the HTTP threads
  ::_exit(0);
}

}  // namespace

MetricsProcess::MetricsProcess(cache::Segment& segment, Endpoint listen, const UpstreamHealth* health,
                               const AnswerMetrics* answers, const MissRatioCurves* curves)
    : segment_(segment), listen_(std::move(listen)), health_(health), answers_(answers), curves_(curves) {
  if (const std::string why = spawn(); !why.empty()) throw std::runtime_error(why);
}

MetricsProcess::~MetricsProcess() { stop_helper(pid_, "metrics"); }

std::string MetricsProcess::spawn() {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    serve_metrics(report[1], supervisor, segment_, listen_, health_, answers_, curves_);
  }
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return std::string("fork: ") + std::strerror(errno);
  }
  // Its word: bytes of an error, or EOF alone once it serves.
  std::string why;
  bool ended = false;
  const std::uint64_t deadline = common::monotonic_ms() + kStartTimeoutMs;
  while (!ended) {
    const std::uint64_t t = common::monotonic_ms();
    if (t >= deadline) break;
    pollfd p{report[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(deadline - t));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[512];
    const ssize_t n = ::read(report[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ended = true;
    else why.append(buf, static_cast<std::size_t>(n));
  }
  ::close(report[0]);
  if (!ended) why = "no word from the metrics process within " + std::to_string(kStartTimeoutMs) + " ms";
  if (!why.empty()) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return why;
  }
  pid_ = pid;
  restart_.started(common::monotonic_ms());
  return "";
}

bool MetricsProcess::reaped(pid_t pid, int status) {
  if (pid != pid_ || pid_ <= 0) return false;
  pid_ = 0;
  const std::uint64_t ran = restart_.died(common::monotonic_ms());
  spdlog::warn("metrics (pid {}) {} after {} ms; serving /metrics again in {} ms", pid, exit_text(status), ran,
               restart_.delay_ms());
  return true;
}

void MetricsProcess::restart_if_due() {
  if (pid_ != 0 || !restart_.due(common::monotonic_ms())) return;
  if (const std::string why = spawn(); !why.empty()) {
    restart_.failed(common::monotonic_ms());
    spdlog::error("metrics endpoint {}: {}; trying again in {} ms", listen_.text, why, restart_.delay_ms());
    return;
  }
  spdlog::info("metrics on http://{}/metrics again (pid {})", listen_.text, pid_);
}

std::uint64_t MetricsProcess::ms_until_restart() const {
  if (pid_ != 0) return HelperRestart::kMaxBackoffMs;
  return restart_.ms_until(common::monotonic_ms());
}

}  // namespace dnsarena::workers

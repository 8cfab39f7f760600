// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/helper_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

#include "common/monotonic_clock.hpp"

namespace dnsarena::workers {

std::uint64_t HelperRestart::died(std::uint64_t now_ms) {
  const std::uint64_t ran = now_ms - started_ms_;
  if (ran > kLongRunMs) backoff_ms_ = kFirstBackoffMs;
  failed(now_ms);
  return ran;
}

void HelperRestart::failed(std::uint64_t now_ms) {
  delay_ms_ = backoff_ms_;
  restart_at_ms_ = now_ms + delay_ms_;
  backoff_ms_ = std::min(backoff_ms_ * 2, kMaxBackoffMs);
}

std::string exit_text(int status) {
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with code " + std::to_string(WEXITSTATUS(status));
}

void stop_helper(pid_t pid, const char* what) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  const std::uint64_t deadline = common::monotonic_ms() + 5000;
  for (;;) {
    const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return;
    if (common::monotonic_ms() > deadline) {
      spdlog::warn("{} (pid {}) ignored SIGTERM for 5 s: SIGKILL", what, pid);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return;
    }
    ::usleep(5'000);
  }
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// What the supervisor's long-lived helper processes share (the RPZ transfer process,
// rpz_transfer_process.hpp; the /metrics process, metrics_process.hpp): when one that died
// is forked again, and how one is stopped.
//
// Restart: 1 s after its death, doubling per death up to kMaxBackoffMs (30 s), back to 1 s
// once it had run for a minute: a helper that dies at once (a bad disk, a port taken) costs
// a fork every 30 s, not a loop; one that died after a long run comes back at once.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dnsarena::workers {

class HelperRestart {
public:
  static constexpr std::uint64_t kFirstBackoffMs = 1000;
  static constexpr std::uint64_t kMaxBackoffMs = 30'000;
  static constexpr std::uint64_t kLongRunMs = 60'000;

  // It was forked (or came back) at `now_ms`.
  void started(std::uint64_t now_ms) { started_ms_ = now_ms; }
  // It ended at `now_ms`: how long it ran (ms); the next start is due after delay_ms().
  std::uint64_t died(std::uint64_t now_ms);
  // A start failed at `now_ms` (the fork, or the helper's own setup): try again later.
  void failed(std::uint64_t now_ms);
  // The delay the last died() or failed() set.
  std::uint64_t delay_ms() const { return delay_ms_; }
  bool due(std::uint64_t now_ms) const { return now_ms >= restart_at_ms_; }
  std::uint64_t ms_until(std::uint64_t now_ms) const { return restart_at_ms_ > now_ms ? restart_at_ms_ - now_ms : 0; }

private:
  std::uint64_t started_ms_ = 0, restart_at_ms_ = 0, delay_ms_ = 0, backoff_ms_ = kFirstBackoffMs;
};

// "exited with code N" or "killed by signal N", from a waitpid status.
std::string exit_text(int status);

// SIGTERM to `pid`, SIGKILL after 5 s (logged with `what`), and reaped.
void stop_helper(pid_t pid, const char* what);

}  // namespace dnsarena::workers

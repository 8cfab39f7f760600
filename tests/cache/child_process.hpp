// SPDX-License-Identifier: GPL-3.0-or-later
// Forked children for multi-process tests (common/child_process underneath). A child runs
// a function and reports through its exit code (0 = success); it never touches Catch2 and
// never returns into the test.
#pragma once
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/child_process.hpp"

namespace dnsarena::test {

// Exit codes children use.
inline constexpr int kChildOk = 0;
inline constexpr int kChildMismatch = 11;      // a read was not byte-exact
inline constexpr int kChildNoProgress = 12;    // a reader never hit, a writer never wrote
inline constexpr int kChildCanaryLost = 13;    // the canary entry was not found
inline constexpr int kChildRejected = 14;      // an insert was refused
inline constexpr int kChildException = 15;     // an exception escaped
inline constexpr int kChildCheckFailed = 16;   // check_segment found problems

// Forks; the child runs `body` with an alarm of `alarm_seconds` (a deadlocked child dies
// of SIGALRM instead of hanging the test) and _exits with its result (kChildException when
// an exception escapes). The returned child is killed and reaped if the test ends early.
inline common::ChildProcess spawn_child(const std::function<int()>& body, unsigned alarm_seconds = 60) {
  return common::ChildProcess::run(body, alarm_seconds, kChildException);
}

// Waits for `child` up to `timeout`; a child still running then is killed. Returns the
// exit code, 128 + signal for a child killed by a signal, or -1 on timeout.
inline int wait_child(common::ChildProcess& child, std::chrono::milliseconds timeout) {
  if (!child.wait_exit(timeout)) {
    child.kill();
    return -1;
  }
  return child.exit_code();
}

// A flag shared across fork (an anonymous shared mapping): the parent tells children
// to stop.
class SharedStopFlag {
public:
  SharedStopFlag() {
    void* p = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    flag_ = new (p) std::atomic<int>(0);
  }
  ~SharedStopFlag() { ::munmap(flag_, sizeof(std::atomic<int>)); }
  SharedStopFlag(const SharedStopFlag&) = delete;
  SharedStopFlag& operator=(const SharedStopFlag&) = delete;
  void set() { flag_->store(1, std::memory_order_release); }
  void clear() { flag_->store(0, std::memory_order_release); }
  bool is_set() const { return flag_->load(std::memory_order_acquire) != 0; }

private:
  std::atomic<int>* flag_;
};

inline unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<unsigned>(std::stoul(v));
}

}  // namespace dnsarena::test

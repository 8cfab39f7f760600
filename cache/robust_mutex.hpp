// SPDX-License-Identifier: GPL-3.0-or-later
// A process-shared, robust pthread mutex living in shared memory.
//
// Boost.Interprocess 1.74's mutex is not robust: a process killed while holding it leaves
// it locked forever. pthread's PTHREAD_MUTEX_ROBUST makes the kernel hand the lock to the
// next locker with EOWNERDEAD; that locker repairs whatever the dead owner left half-done
// and calls pthread_mutex_consistent(), without which the mutex becomes unusable
// (ENOTRECOVERABLE) at the next unlock.
//
// Two ways to lock:
//   robust_mutex_lock / RobustLockGuard(m, repair)           waits as long as it takes;
//                                                             throws WriterLockError
//   robust_mutex_lock_for / RobustLockGuard(m, repair, t)    waits at most t; reports
//                                                             what happened, never throws
// The serving side uses the bounded form, so a lock holder that is stopped (SIGSTOP, a
// debugger, a livelocked process) or a lock that can never be taken again costs an
// uncached answer, not every answer.
#pragma once
#include <pthread.h>

#include <chrono>
#include <functional>
#include <stdexcept>

namespace dnsarena::cache {

enum class LockResult {
  acquired,          // locked
  repaired,          // locked; the previous owner had died and repair() ran
  timed_out,         // not locked: still held by another owner after the bounded wait
  not_recoverable,   // not locked: ENOTRECOVERABLE (a repair failed earlier, for good)
  repair_failed,     // not locked: the previous owner died and repair() threw; the mutex
                     // is now not recoverable
};
inline bool locked(LockResult r) { return r == LockResult::acquired || r == LockResult::repaired; }
const char* describe(LockResult r);

// Thrown by the unbounded lock when the mutex cannot be taken.
class WriterLockError : public std::runtime_error {
public:
  WriterLockError(LockResult r, const std::string& what) : std::runtime_error(what), result_(r) {}
  LockResult result() const { return result_; }

private:
  LockResult result_;
};

// REQUIRES: `m` points into shared memory that no process uses as a mutex yet.
void robust_mutex_init(pthread_mutex_t* m);

// Locks `m`. When the previous owner died holding it, calls `repair()` while holding the
// lock, then marks the mutex consistent. Returns true when a repair ran.
// Throws WriterLockError if the mutex is not recoverable or the repair threw.
bool robust_mutex_lock(pthread_mutex_t* m, const std::function<void()>& repair);

// The same with a bounded wait (nanoseconds::max() waits without bound
// but still reports instead of throwing). A repair that throws is caught: the
// mutex is left unlocked and not recoverable, and repair_failed is returned (with the
// exception's message in *error when given).
LockResult robust_mutex_lock_for(pthread_mutex_t* m, std::chrono::nanoseconds timeout,
                                 const std::function<void()>& repair, std::string* error = nullptr);

void robust_mutex_unlock(pthread_mutex_t* m);

// RAII holder. NOTE: the repair callback runs inside the constructor.
class RobustLockGuard {
public:
  // Unbounded: owns the lock afterwards or has thrown.
  RobustLockGuard(pthread_mutex_t* m, const std::function<void()>& repair)
      : m_(m), result_(robust_mutex_lock(m, repair) ? LockResult::repaired : LockResult::acquired) {}
  // Bounded: check owns() (and result()) before touching what the lock covers.
  RobustLockGuard(pthread_mutex_t* m, const std::function<void()>& repair, std::chrono::nanoseconds timeout,
                  std::string* error = nullptr)
      : m_(m), result_(robust_mutex_lock_for(m, timeout, repair, error)) {}
  ~RobustLockGuard() {
    if (owns()) robust_mutex_unlock(m_);
  }
  RobustLockGuard(const RobustLockGuard&) = delete;
  RobustLockGuard& operator=(const RobustLockGuard&) = delete;
  bool owns() const { return locked(result_); }
  bool repaired() const { return result_ == LockResult::repaired; }
  LockResult result() const { return result_; }

private:
  pthread_mutex_t* m_;
  LockResult result_;
};

}  // namespace dnsarena::cache

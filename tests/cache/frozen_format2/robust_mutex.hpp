// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/robust_mutex.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// A process-shared, robust pthread mutex living in shared memory.
//
// Boost.Interprocess 1.74's mutex is not robust: a process killed while holding it leaves
// it locked forever. pthread's PTHREAD_MUTEX_ROBUST makes the kernel hand the lock to the
// next locker with EOWNERDEAD; that locker repairs whatever the dead owner left half-done
// and calls pthread_mutex_consistent(), without which the mutex becomes unusable
// (ENOTRECOVERABLE) at the next unlock.
#pragma once
#include <pthread.h>

#include <functional>
#include <stdexcept>

namespace dnsarena::frozen2 {

// REQUIRES: `m` points into shared memory that no process uses as a mutex yet.
void robust_mutex_init(pthread_mutex_t* m);

// Locks `m`. When the previous owner died holding it, calls `repair()` while holding the
// lock, then marks the mutex consistent. Returns true when a repair ran.
// Throws std::runtime_error if the mutex is not recoverable.
bool robust_mutex_lock(pthread_mutex_t* m, const std::function<void()>& repair);

void robust_mutex_unlock(pthread_mutex_t* m);

// RAII holder. NOTE: the repair callback runs inside the constructor.
class RobustLockGuard {
public:
  RobustLockGuard(pthread_mutex_t* m, const std::function<void()>& repair)
      : m_(m), repaired_(robust_mutex_lock(m, repair)) {}
  ~RobustLockGuard() { robust_mutex_unlock(m_); }
  RobustLockGuard(const RobustLockGuard&) = delete;
  RobustLockGuard& operator=(const RobustLockGuard&) = delete;
  bool repaired() const { return repaired_; }

private:
  pthread_mutex_t* m_;
  bool repaired_;
};

}  // namespace dnsarena::frozen2

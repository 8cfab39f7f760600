// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/robust_mutex.cpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
#include "robust_mutex.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

namespace dnsarena::frozen3 {

namespace {
[[noreturn]] void fail(const char* what, int rc) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(rc));
}

constexpr const char* kNotRecoverable =
    "segment writer lock is not recoverable (a repair failed earlier): writes are off; stop the service, "
    "remove the segment and start again";

// After EOWNERDEAD: repair, then mark consistent. A throwing repair leaves the mutex
// inconsistent: unlocking it then makes it ENOTRECOVERABLE, which is the honest outcome.
LockResult finish_dead_owner(pthread_mutex_t* m, const std::function<void()>& repair, std::string* error) {
  try {
    repair();
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    pthread_mutex_unlock(m);
    return LockResult::repair_failed;
  } catch (...) {
    if (error) *error = "unknown exception";
    pthread_mutex_unlock(m);
    return LockResult::repair_failed;
  }
  const int rc = pthread_mutex_consistent(m);
  if (rc != 0) fail("pthread_mutex_consistent", rc);
  return LockResult::repaired;
}

LockResult result_of(pthread_mutex_t* m, int rc, const std::function<void()>& repair, std::string* error) {
  switch (rc) {
    case 0: return LockResult::acquired;
    case EOWNERDEAD: return finish_dead_owner(m, repair, error);
    case ENOTRECOVERABLE: return LockResult::not_recoverable;
    case ETIMEDOUT: return LockResult::timed_out;
    default: fail("pthread_mutex_lock", rc);
  }
}

}  // namespace

const char* describe(LockResult r) {
  switch (r) {
    case LockResult::acquired: return "acquired";
    case LockResult::repaired: return "acquired after repairing a dead owner's work";
    case LockResult::timed_out: return "still held by another process after the bounded wait";
    case LockResult::not_recoverable: return kNotRecoverable;
    case LockResult::repair_failed: return "repair after a dead lock owner failed; the writer lock is now not recoverable";
  }
  return "?";
}

void robust_mutex_init(pthread_mutex_t* m) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc != 0) fail("pthread_mutexattr_init", rc);
  if ((rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED)) != 0) fail("setpshared", rc);
  if ((rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST)) != 0) fail("setrobust", rc);
  rc = pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) fail("pthread_mutex_init", rc);
}

bool robust_mutex_lock(pthread_mutex_t* m, const std::function<void()>& repair) {
  std::string error;
  const LockResult r = result_of(m, pthread_mutex_lock(m), repair, &error);
  if (locked(r)) return r == LockResult::repaired;
  throw WriterLockError(r, r == LockResult::repair_failed ? std::string(describe(r)) + ": " + error : describe(r));
}

LockResult robust_mutex_lock_for(pthread_mutex_t* m, std::chrono::nanoseconds timeout,
                                 const std::function<void()>& repair, std::string* error) {
  if (timeout == std::chrono::nanoseconds::max()) return result_of(m, pthread_mutex_lock(m), repair, error);
  // NOTE: no pthread_mutex_trylock first: on a not-recoverable robust mutex glibc 2.36's
  // trylock returns ENOTRECOVERABLE but leaves the lock word taken, so every other
  // process then sees EBUSY (a "held" lock) instead. timedlock with a deadline already
  // past still makes one attempt, and releases the word on ENOTRECOVERABLE.
  // NOTE: pthread_mutex_timedlock (CLOCK_REALTIME), not pthread_mutex_clocklock
  // (CLOCK_MONOTONIC): ThreadSanitizer (GCC 12) does not intercept clocklock and then
  // reports every unlock as "unlock of an unlocked mutex". A wall-clock step during a
  // wait of milliseconds lengthens or shortens that one wait; nothing else.
  timespec deadline{};
  ::clock_gettime(CLOCK_REALTIME, &deadline);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
  deadline.tv_nsec += static_cast<long>(ns % 1'000'000'000);
  if (deadline.tv_nsec >= 1'000'000'000) {
    deadline.tv_nsec -= 1'000'000'000;
    ++deadline.tv_sec;
  }
  int rc;
  do rc = pthread_mutex_timedlock(m, &deadline);
  while (rc == EINTR);
  return result_of(m, rc, repair, error);
}

void robust_mutex_unlock(pthread_mutex_t* m) { pthread_mutex_unlock(m); }

}  // namespace dnsarena::frozen3

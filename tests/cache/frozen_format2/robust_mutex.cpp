// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/robust_mutex.cpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
#include "robust_mutex.hpp"

#include <cerrno>
#include <cstring>
#include <string>

namespace dnsarena::frozen2 {

namespace {
[[noreturn]] void fail(const char* what, int rc) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(rc));
}
}  // namespace

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
  int rc = pthread_mutex_lock(m);
  if (rc == 0) return false;
  if (rc == EOWNERDEAD) {
    // We own the lock; the state it guards may be half-updated. Repair, then declare the
    // mutex consistent. If repair throws, leave it inconsistent: unlocking without
    // pthread_mutex_consistent makes it ENOTRECOVERABLE, which is the honest outcome.
    try {
      repair();
    } catch (...) {
      pthread_mutex_unlock(m);
      throw;
    }
    rc = pthread_mutex_consistent(m);
    if (rc != 0) fail("pthread_mutex_consistent", rc);
    return true;
  }
  if (rc == ENOTRECOVERABLE)
    throw std::runtime_error("segment writer lock is not recoverable (a repair failed earlier); "
                             "recreate the segment");
  fail("pthread_mutex_lock", rc);
}

void robust_mutex_unlock(pthread_mutex_t* m) { pthread_mutex_unlock(m); }

}  // namespace dnsarena::frozen2

// SPDX-License-Identifier: GPL-3.0-or-later
// A forked process that writes a host table without pause until it is killed -9: the
// tests that a reader never takes a torn record (infra_table_test, nsec_ranges_test).
#pragma once
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>

namespace dnsarena::test {

// Forks a child that calls step(n) for n = 0, 1, 2 ... and never returns; its pid, once
// the child has started.
template <class Step>
pid_t fork_endless_writer(Step step) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    for (std::uint64_t n = 0;; ++n) step(n);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  ::close(ready[1]);
  return pid;
}

// SIGKILL, then reaped.
inline void kill_writer(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

}  // namespace dnsarena::test

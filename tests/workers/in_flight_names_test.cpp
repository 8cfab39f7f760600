// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide per-name table (workers/in_flight_names.hpp): the bound holds over rows
// written by different processes, a refused acquire counts nothing, and a dead worker's
// counts go when its row is reset.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "workers/in_flight_names.hpp"

using dnsarena::workers::InFlightNames;

TEST_CASE("in-flight names: the bound counts every row, and a refused acquire counts nothing", "[in_flight_names]") {
  InFlightNames t(2, false);
  const std::uint32_t b = t.bucket_of(12345);
  REQUIRE(t.acquire(0, b, 3));
  REQUIRE(t.acquire(1, b, 3));
  REQUIRE(t.acquire(1, b, 3));
  CHECK_FALSE(t.acquire(0, b, 3));
  CHECK_FALSE(t.acquire(1, b, 3));
  CHECK(t.count(b) == 3);
  t.release(1, b);
  CHECK(t.count(b) == 2);
  CHECK(t.acquire(0, b, 3));
  t.reset_row(0);
  CHECK(t.count(b) == 1);
}

TEST_CASE("in-flight names: shared across fork, and a killed worker's row is reset by its successor",
          "[in_flight_names]") {
  InFlightNames t(2, true);
  const std::uint32_t b = t.bucket_of(777);
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {  // worker 1: holds two queries for the name, then is killed
    bool ok = t.acquire(1, b, 2) && t.acquire(1, b, 2);
    const char c = ok ? 1 : 0;
    [[maybe_unused]] const ssize_t w = ::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  REQUIRE(c == 1);
  CHECK_FALSE(t.acquire(0, b, 2));  // the other process holds the whole bound
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(t.count(b) == 2);  // the dead worker's counts stay ...
  t.reset_row(1);          // ... until its replacement starts on the row
  CHECK(t.acquire(0, b, 2));
  ::close(ready[0]);
  ::close(ready[1]);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// workers/helper_process.hpp: when a helper process that died is forked again, and how
// one that ignores SIGTERM is stopped.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "workers/helper_process.hpp"

using dnsarena::workers::HelperRestart;

TEST_CASE("helper restart: 1 s doubling to 30 s while it dies at once, 1 s again after a long run", "[helper]") {
  HelperRestart r;
  std::uint64_t now = 1'000'000;
  r.started(now);
  const std::uint64_t expected[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (const std::uint64_t delay : expected) {
    CHECK(r.died(now + 10) == 10);  // it ran 10 ms
    CHECK(r.delay_ms() == delay);
    CHECK_FALSE(r.due(now + 10 + delay - 1));
    CHECK(r.ms_until(now + 10) == delay);
    now += 10 + delay;
    CHECK(r.due(now));
    r.started(now);
  }
  CHECK(r.died(now + HelperRestart::kLongRunMs + 1) == HelperRestart::kLongRunMs + 1);
  CHECK(r.delay_ms() == 1000);  // it had run for over a minute
  r.failed(now);
  CHECK(r.delay_ms() == 2000);  // a failed start counts as a quick death
}

TEST_CASE("stop_helper: SIGTERM, and SIGKILL for one that ignores it, reaped either way", "[helper]") {
  const pid_t polite = ::fork();
  REQUIRE(polite >= 0);
  if (polite == 0) {
    ::pause();
    ::_exit(0);
  }
  dnsarena::workers::stop_helper(polite, "test helper");
  errno = 0;
  CHECK(::waitpid(polite, nullptr, WNOHANG) == -1);  // already reaped
  CHECK(errno == ECHILD);

  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t stubborn = ::fork();
  REQUIRE(stubborn >= 0);
  if (stubborn == 0) {
    ::signal(SIGTERM, SIG_IGN);
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);  // SIGTERM is ignored from here on
  ::close(ready[0]);
  ::close(ready[1]);
  dnsarena::workers::stop_helper(stubborn, "test helper");
  errno = 0;
  CHECK(::waitpid(stubborn, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

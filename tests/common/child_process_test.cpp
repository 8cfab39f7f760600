// SPDX-License-Identifier: GPL-3.0-or-later
// common/child_process: exit codes, signals, stop() escalation, captured output, logs.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/child_process.hpp"
#include "common/find_program.hpp"

using namespace dnsarena::common;
using namespace std::chrono_literals;

TEST_CASE("a forked function reports through its exit code", "[common][child]") {
  ChildProcess ok = ChildProcess::run([] { return 0; });
  CHECK(ok.wait() == 0);
  ChildProcess seven = ChildProcess::run([] { return 7; });
  CHECK(seven.wait() == 7);
  CHECK(seven.exit_status() == "exit code 7");
  ChildProcess thrower = ChildProcess::run([]() -> int { throw std::runtime_error("boom"); }, 60, 15);
  CHECK(thrower.wait() == 15);
  ChildProcess killed = ChildProcess::run([] { ::raise(SIGKILL); return 0; });
  CHECK(killed.wait() == 128 + SIGKILL);
  CHECK(killed.exit_status() == "killed by signal 9");
}

TEST_CASE("stop() sends SIGTERM, then SIGKILL to a child that ignores it", "[common][child]") {
  ChildProcess polite = ChildProcess::run([] { ::pause(); return 0; });
  CHECK(polite.running());
  polite.stop(2s);
  CHECK(polite.exit_code() == 128 + SIGTERM);
  ChildProcess stubborn = ChildProcess::run([] {
    ::signal(SIGTERM, SIG_IGN);
    for (;;) ::pause();
    return 0;
  });
  std::this_thread::sleep_for(50ms);  // let it ignore SIGTERM first
  const auto t0 = std::chrono::steady_clock::now();
  stubborn.stop(200ms);
  CHECK(stubborn.exit_code() == 128 + SIGKILL);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
}

TEST_CASE("the destructor ends a running child", "[common][child]") {
  pid_t pid = -1;
  {
    ChildProcess c = ChildProcess::run([] { ::pause(); return 0; });
    pid = c.pid();
  }
  CHECK(::kill(pid, 0) != 0);  // reaped: no such process
}

TEST_CASE("programs: captured stdout, a log file, exec failure, PATH lookup", "[common][child]") {
  int status = -1;
  CHECK(run_and_capture({"echo", "hello"}, status) == "hello\n");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  const std::string log = "/tmp/dnsarena-common-test-" + std::to_string(::getpid()) + ".log";
  ChildProcess sh({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, {.log_path = log, .truncate_log = true});
  CHECK(sh.wait() == 3);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "out\nerr\n");
  CHECK(sh.log_tail(4) == "err\n");
  ::unlink(log.c_str());

  ChildProcess missing({"/nonexistent/program"});
  CHECK(missing.wait() == 127);

  CHECK(find_program("sh").has_value());
  CHECK_FALSE(find_program("no-such-program-dnsarena").has_value());
  CHECK_THROWS_WITH(require_program("no-such-program-dnsarena", "install it"),
                    Catch::Contains("no-such-program-dnsarena not found on PATH") && Catch::Contains("install it"));
}

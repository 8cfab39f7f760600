// SPDX-License-Identifier: GPL-3.0-or-later
// One port, one service: a second `dnsarena serve` on a port that is already served is
// refused before it touches its segment (SO_REUSEPORT would otherwise let the two split
// the port's queries), while a serve restarted after its supervisor was killed -9 waits
// for the orphaned workers to let go of the port and comes back warm.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <thread>

#include "cache/segment.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {
// Running (a zombie no one reaped, as an orphan may be in a container, does not count).
bool running(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z' && line[close + 2] != 'X';
}

bool shm_exists(const std::string& segment) {
  struct stat st {};
  return ::stat(("/dev/shm/" + segment).c_str(), &st) == 0;
}
}  // namespace

TEST_CASE("a second serve on a port already served is refused and touches nothing", "[serve][port]") {
  Service s;
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).rcode() == 0);
  const std::string other = unique_segment("second");
  ServeProcess second({"--listen", "127.0.0.1:" + std::to_string(s.port), "--segment", other, "--workers", "1",
                       "--max-entries", "1000", "--arena-bytes", "8M", "--upstream",
                       "127.0.0.1:" + std::to_string(s.upstream.port()), "--no-metrics"},
                      s.port);
  // It gives the port a 3 s grace (a killed service's workers), then exits 1.
  REQUIRE(second.wait_exit(std::chrono::seconds(15)));
  CHECK(second.stop() == 1);
  const std::string log = second.log();
  CHECK(log.find("is already bound by pid ") != std::string::npos);
  CHECK(log.find("pid " + std::to_string(s.serve->pid()) + " (dnsarena)") != std::string::npos);
  CHECK(!shm_exists(other));
  // The first service never lost a query to the second one: every one of 40 answers is
  // a hit of its own cache (one upstream query in all).
  for (int i = 0; i < 40; ++i) CHECK(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), "a.test", 1)).rcode() == 0);
  CHECK(s.upstream.queries() == 1);
}

TEST_CASE("kill -9 of the supervisor: a new serve on the same port waits for the orphans and is warm",
          "[serve][port][kill]") {
  Service s;
  REQUIRE(udp_exchange(s.port, make_query(1, "a.test", 1)).rcode() == 0);
  const std::uint64_t asked = s.upstream.queries();
  const std::vector<pid_t> orphans = s.serve->children();
  REQUIRE(::kill(s.serve->pid(), SIGKILL) == 0);
  // start() returns once the port accepts TCP, which the orphans may still do: the new
  // supervisor's own readiness is its log line.
  s.start();
  bool warm = false;
  for (int i = 0; i < 200 && !warm; ++i) {
    warm = s.serve->log().find("re-attached (warm)") != std::string::npos;
    if (!warm) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(s.serve->log());
  REQUIRE(warm);
  CHECK(s.serve->log().find("already bound") == std::string::npos);
  for (pid_t p : orphans) CHECK(!running(p));  // gone (the new serve waited for that)
  // The log line comes before the workers are forked (slowly, under ASan): wait for an answer.
  REQUIRE(udp_answered_within(s.port, make_query(1, "a.test", 1)));
  CHECK(s.serve->children().size() == 2);
  for (int i = 0; i < 20; ++i) CHECK(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(i), "a.test", 1)).rcode() == 0);
  CHECK(s.upstream.queries() == asked);
}

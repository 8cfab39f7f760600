// SPDX-License-Identifier: GPL-3.0-or-later
// Liveness of the writer lock: a failing repair must not turn every later insert into an
// exception (the worker would die and be restarted into the same exception: a crash
// loop); the writes stop, loudly, while lookups go on, and `check` reports the segment.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "cache/failpoint.hpp"
#include "cache/test_hooks.hpp"
#include "tests/command_output.hpp"
#include "child_process.hpp"
#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

// Forks a child that takes the writer lock of segment `name` and dies holding it.
void kill_a_lock_holder(const std::string& name) {
  dnsarena::common::ChildProcess holder = spawn_child([&] {
    Segment seg = Segment::attach(name);
    Cache c(seg, SlotRole::worker, 1);
    CacheTestHooks::with_writer_lock(c, [] { ::raise(SIGKILL); });
    return kChildNoProgress;
  }, 30);
  REQUIRE(wait_child(holder, std::chrono::seconds(10)) == 128 + SIGKILL);
}

std::string run_command(const std::string& cmd, int* status) {
  return dnsarena::test::command_output(cmd + " 2>&1", status);
}

}  // namespace

TEST_CASE("a repair that throws leaves the lock unrecoverable: inserts stop without throwing, lookups go on, "
          "check reports it",
          "[multiprocess][lock]") {
  TestSegment ts(tiny_geometry(1000, 4096, 8), "badrepair");
  const std::uint32_t now = wall_clock_now();
  Cache c(ts.seg);
  REQUIRE(c.insert_encoded(verifiable_key(1), encode_verifiable({1, 1, 1}, now), now) == InsertStatus::inserted);
  kill_a_lock_holder(ts.name());
  set_failpoint([](FailStep step, std::uint64_t) {
    if (step == FailStep::repair_begin) throw std::runtime_error("injected repair failure");
  });
  InsertStatus st{};
  REQUIRE_NOTHROW(st = c.insert_encoded(verifiable_key(2), encode_verifiable({2, 1, 1}, now), now));
  CHECK(st == InsertStatus::skipped);
  set_failpoint({});
  // The mutex is now ENOTRECOVERABLE for every process: still no exception, no insert.
  REQUIRE_NOTHROW(st = c.insert_encoded(verifiable_key(3), encode_verifiable({3, 1, 1}, now), now));
  CHECK(st != InsertStatus::inserted);
  CHECK(st == InsertStatus::skipped);
  REQUIRE_NOTHROW(c.erase(verifiable_key(1)));
  CHECK(c.stats().counter(Counter::writer_lock_unavailable) == 3);
  EntryCopy copy;
  CHECK(c.lookup(verifiable_key(1), now, copy) == LookupStatus::hit);  // reads need no lock
  CheckReport rep;
  REQUIRE_NOTHROW(rep = check_segment(c));
  CHECK_FALSE(rep.ok());
  std::string problems;
  for (const auto& p : rep.problems) problems += p + "\n";
  INFO(problems);
  CHECK(problems.find("not recoverable") != std::string::npos);
  int status = 0;
  const std::string out = run_command(std::string(DNSARENA_BINARY) + " check " + ts.name(), &status);
  INFO(out);
  CHECK(status == 1);
  CHECK(out.find("not recoverable") != std::string::npos);
}

TEST_CASE("a stopped lock holder: inserts give up after the bounded wait, lookups go on", "[multiprocess][lock]") {
  TestSegment ts(tiny_geometry(1000, 4096, 8), "stoppedholder");
  const std::uint32_t now = wall_clock_now();
  Cache c(ts.seg);
  REQUIRE(c.insert_encoded(verifiable_key(1), encode_verifiable({1, 1, 1}, now), now) == InsertStatus::inserted);
  const std::string name = ts.name();
  SharedStopFlag holding;
  dnsarena::common::ChildProcess holder = spawn_child([&] {
    Segment seg = Segment::attach(name);
    Cache h(seg, SlotRole::worker, 1);
    CacheTestHooks::with_writer_lock(h, [&] {
      holding.set();
      ::raise(SIGSTOP);  // a stopped process (debugger, SIGSTOP, swapped out) holding the lock
    });
    return kChildOk;
  }, 60);
  while (!holding.is_set()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  c.set_writer_lock_timeout(std::chrono::milliseconds(20));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(c.insert_encoded(verifiable_key(2), encode_verifiable({2, 1, 1}, now), now) == InsertStatus::skipped);
  CHECK_FALSE(c.erase(verifiable_key(1)));
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(waited < std::chrono::seconds(2));
  CHECK(c.stats().counter(Counter::writer_lock_unavailable) == 2);
  EntryCopy copy;
  CHECK(c.lookup(verifiable_key(1), now, copy) == LookupStatus::hit);
  // The holder goes on and releases the lock: writes resume.
  ::kill(holder.pid(), SIGCONT);
  REQUIRE(wait_child(holder, std::chrono::seconds(10)) == kChildOk);
  CHECK(c.insert_encoded(verifiable_key(2), encode_verifiable({2, 1, 1}, now), now) == InsertStatus::inserted);
  check_invariants(c);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Crash at every write step (failpoint.hpp), on segments in four states.
//
// One scripted writer reaches every failpoint the cache declares: it creates the segment
// (state `absent`) or attaches, repairs what a dead writer left (a dead lock holder in the
// other states), inserts until it has reclaimed two regions of the log, builds a cuckoo
// displacement and a conflict eviction in buckets it owns, replaces a key and erases two.
// For each state the script runs once to completion, counting how often it reaches each
// step; then, for every step it reached, a fresh copy of the state gets a writer killed
// (SIGKILL) at the step's first, middle and last occurrence. After each kill the next
// writer (this process) must leave:
//   - `dnsarena check` and the invariant walker clean after its repair;
//   - every key answered with its exact bytes (verify_entry) or missed;
//   - no erased key served: neither those the victim erased before dying, nor those the
//     next writer erases;
//   - live_entries equal to the number of keys that answer;
//   - a cache that goes on inserting.
// The keys are real (no hash override, so `dnsarena check` sees the same buckets): they
// are picked by their real hash so that buckets 0-3 belong to the scripted displacement
// and conflict and every other key lives in buckets 4 and up.
// The test fails when a declared failpoint is never reached, and prints how many crash
// points it covered.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cache/failpoint.hpp"
#include "cache/test_hooks.hpp"
#include "child_process.hpp"
#include "common/child_process.hpp"
#include "common/shared_anonymous.hpp"
#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

enum class State : std::uint8_t { absent, empty, full, mid_reclaim };
constexpr std::array kStates = {State::absent, State::empty, State::full, State::mid_reclaim};
constexpr const char* kStateNames[] = {"absent", "empty (dead lock holder)", "full (dead lock holder)",
                                       "mid-reclaim (writer killed inside a reclaim)"};

// 8 regions of 8 KiB (about 20 verifiable entries each): the arena, not the live-entry
// limit (512, 80 buckets), is what fills, so the state `full` has one free region left.
Geometry matrix_geometry() { return tiny_geometry(512, 8192, 8); }

// Keys picked by their real buckets (b1, b2) for a segment of `buckets` buckets.
struct ScriptKeys {
  std::vector<std::uint32_t> bulk;     // both buckets >= 4
  std::uint32_t displaced = 0;         // (0, 3): first in bucket 0, can move to bucket 3
  std::vector<std::uint32_t> bucket0;  // 7 x (0, 0): fill bucket 0 after `displaced`
  std::vector<std::uint32_t> bucket1;  // 8 x (1, 1): fill bucket 1
  std::uint32_t newcomer = 0;          // (0, 1): both full, displaces `displaced`
  std::vector<std::uint32_t> bucket2;  // 9 x (2, 2): the ninth evicts one (conflict)

  std::vector<std::uint32_t> all() const {
    std::vector<std::uint32_t> v = bulk;
    v.push_back(displaced);
    v.insert(v.end(), bucket0.begin(), bucket0.end());
    v.insert(v.end(), bucket1.begin(), bucket1.end());
    v.push_back(newcomer);
    v.insert(v.end(), bucket2.begin(), bucket2.end());
    return v;
  }
  std::array<std::uint32_t, 2> erased() const { return {displaced, bucket1.front()}; }
};

constexpr std::size_t kBulkKeys = 1500;
constexpr std::size_t kPrepBulk = 0, kMidReclaimBulk = 500, kScriptBulk = 700, kAfterBulk = 1300;

ScriptKeys pick_keys(std::uint64_t buckets) {
  ScriptKeys keys;
  bool have_displaced = false, have_newcomer = false;
  for (std::uint32_t k = 1'000'000; k < 3'000'000; ++k) {
    const IndexPosition p = index_position(verifiable_key(k).hash(), buckets);
    const auto is = [&](std::uint64_t a, std::uint64_t b) { return p.bucket1 == a && p.bucket2 == b; };
    if (p.bucket1 >= 4 && p.bucket2 >= 4) {
      if (keys.bulk.size() < kBulkKeys) keys.bulk.push_back(k);
    } else if (is(0, 3) && !have_displaced) {
      keys.displaced = k;
      have_displaced = true;
    } else if (is(0, 0) && keys.bucket0.size() < 7) {
      keys.bucket0.push_back(k);
    } else if (is(1, 1) && keys.bucket1.size() < 8) {
      keys.bucket1.push_back(k);
    } else if (is(0, 1) && !have_newcomer) {
      keys.newcomer = k;
      have_newcomer = true;
    } else if (is(2, 2) && keys.bucket2.size() < 9) {
      keys.bucket2.push_back(k);
    }
    if (keys.bulk.size() == kBulkKeys && have_displaced && have_newcomer && keys.bucket0.size() == 7 &&
        keys.bucket1.size() == 8 && keys.bucket2.size() == 9)
      return keys;
  }
  throw std::runtime_error("pick_keys: not enough keys with the buckets wanted");
}

// What the scripted writer reports to the parent (an anonymous shared mapping).
struct ScriptLog {
  std::array<std::atomic<std::uint32_t>, kFailStepCount> reached{};  // occurrences of each step
  std::array<std::atomic<std::uint32_t>, 2> erased{};                 // ScriptKeys::erased() done
  std::atomic<std::uint32_t> finished{0};
};

using SharedScriptLog = dnsarena::common::SharedAnonymous<ScriptLog>;

std::size_t step_index(FailStep s) { return static_cast<std::size_t>(s); }

// Kill at the `kill_at`-th occurrence of `kill_step` (0: never, a dry run).
struct KillPoint {
  FailStep step = FailStep::repair_begin;
  std::uint32_t occurrence = 0;
};

void put(Cache& c, std::uint32_t k, std::uint32_t version, std::uint32_t now) {
  const InsertStatus st = c.insert_encoded(verifiable_key(k), encode_verifiable({k, version, 7}, now), now);
  if (st == InsertStatus::rejected || st == InsertStatus::skipped) ::_exit(kChildRejected);
}

// The scripted writer (runs in a forked child).
int run_script(const std::string& name, State state, const ScriptKeys& keys, std::uint32_t now, ScriptLog* log,
               KillPoint kill) {
  set_failpoint([log, kill](FailStep s, std::uint64_t) {
    const std::uint32_t n = log->reached[step_index(s)].fetch_add(1) + 1;
    if (kill.occurrence != 0 && s == kill.step && n == kill.occurrence) ::raise(SIGKILL);
  });
  Segment seg = state == State::absent ? Segment::open(name, matrix_geometry(), OpenPolicy::refuse)
                                       : Segment::attach(name);
  Cache c(seg, SlotRole::worker, 1);
  // 1. Insert until this script has reclaimed two regions (the first insert repairs).
  const std::uint32_t bumps_before = log->reached[step_index(FailStep::reclaim_generation_bumped)].load();
  std::size_t i = kScriptBulk;
  do {
    if (i == kAfterBulk) return kChildNoProgress;
    put(c, keys.bulk[i++], 1, now);
  } while (log->reached[step_index(FailStep::reclaim_generation_bumped)].load() < bumps_before + 2);
  // 2. A cuckoo displacement: `displaced` first into bucket 0, then buckets 0 and 1 full.
  put(c, keys.displaced, 1, now);
  for (std::uint32_t k : keys.bucket0) put(c, k, 1, now);
  for (std::uint32_t k : keys.bucket1) put(c, k, 1, now);
  put(c, keys.newcomer, 1, now);
  // 3. A conflict eviction: nine keys that all hash to bucket 2 alone.
  for (std::uint32_t k : keys.bucket2) put(c, k, 1, now);
  // 4. A replace, then two erases (the displaced key and one of bucket 1).
  put(c, keys.newcomer, 2, now);
  const auto erased = keys.erased();
  for (std::size_t e = 0; e < erased.size(); ++e) {
    if (!c.erase(verifiable_key(erased[e]))) return kChildNoProgress;
    log->erased[e].store(1);
  }
  log->finished.store(1);
  return kChildOk;
}

// A fresh segment in `state` under `name` (nothing there for `absent`).
void prepare(const std::string& name, State state, const ScriptKeys& keys, std::uint32_t now) {
  if (state == State::absent) return;
  Segment seg = Segment::create(name, matrix_geometry());
  if (state != State::empty) {
    // Full: the ring wrapped (reclaims happened) and only the one spare region is free,
    // so the script's first seal reclaims.
    Cache c(seg, SlotRole::tool);
    std::size_t i = kPrepBulk;
    while (c.stats().counter(Counter::evictions) == 0 || free_of(seg.header().head_and_free.load()) > 1) {
      REQUIRE(i < kMidReclaimBulk);
      REQUIRE(c.insert_encoded(verifiable_key(keys.bulk[i]), encode_verifiable({keys.bulk[i], 1, 3}, now), now) !=
              InsertStatus::rejected);
      ++i;
    }
  }
  dnsarena::common::ChildProcess holder = spawn_child([&] {
    Segment s = Segment::attach(name);
    Cache c(s, SlotRole::worker, 2);
    if (state == State::mid_reclaim) {
      // Killed halfway through the first region it reclaims.
      set_failpoint([](FailStep step, std::uint64_t done) {
        if (step == FailStep::reclaim_entry && done == 8) ::raise(SIGKILL);
      });
      for (std::size_t i = kMidReclaimBulk; i < kScriptBulk; ++i)
        c.insert_encoded(verifiable_key(keys.bulk[i]), encode_verifiable({keys.bulk[i], 1, 4}, now), now);
    } else {
      CacheTestHooks::with_writer_lock(c, [] { ::raise(SIGKILL); });  // dies holding the lock
    }
    return kChildNoProgress;
  }, 30);
  REQUIRE(wait_child(holder, std::chrono::seconds(20)) == 128 + SIGKILL);
  if (state == State::mid_reclaim) REQUIRE(seg.header().reclaiming_region.load() != kNoRegion);
}

// What the next writer must find after the victim died at `kill` (or finished).
void check_after(const std::string& name, const ScriptKeys& keys, const ScriptLog& log, std::uint32_t now) {
  Segment seg = Segment::open(name, matrix_geometry(), OpenPolicy::refuse);  // recovers a half-made one
  Cache c(seg, SlotRole::tool);
  EntryCopy copy;
  const auto erased = keys.erased();
  // Before any repair: what the victim erased is not served (readers take no lock).
  for (std::size_t e = 0; e < erased.size(); ++e)
    if (log.erased[e].load()) {
      INFO("key " << erased[e] << " served after the victim erased it");
      CHECK(c.lookup(verifiable_key(erased[e]), now, copy) != LookupStatus::hit);
    }
  // The next writer: erasing takes the lock (EOWNERDEAD: repair first).
  for (std::uint32_t k : erased) c.erase(verifiable_key(k));
  check_invariants(c);
  int status = 0;
  const std::string out =
      dnsarena::common::run_and_capture({DNSARENA_BINARY, "check", name}, status, std::chrono::seconds(30));
  INFO("dnsarena check " << name << ":\n" << out);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  std::uint64_t hits = 0;
  for (std::uint32_t k : keys.all()) {
    if (c.lookup(verifiable_key(k), now, copy) != LookupStatus::hit) continue;
    ++hits;
    const std::string wrong = verify_entry(copy.span(), k);
    INFO("key " << k << ": " << wrong);
    CHECK(wrong.empty());
    const bool is_erased = k == erased[0] || k == erased[1];
    INFO("key " << k << " served after erase");
    CHECK_FALSE(is_erased);
  }
  CHECK(c.stats().live_entries == hits);
  // The cache goes on: inserts (with reclaims) and a clean check.
  for (std::size_t i = kAfterBulk; i < kAfterBulk + 60; ++i)
    REQUIRE(c.insert_encoded(verifiable_key(keys.bulk[i]), encode_verifiable({keys.bulk[i], 1, 5}, now), now) ==
            InsertStatus::inserted);
  check_invariants(c);
}

}  // namespace

TEST_CASE("a writer killed at every write step, on empty, full, mid-reclaim and absent segments",
          "[multiprocess][crash]") {
  const std::uint32_t now = wall_clock_now();
  const ScriptKeys keys = pick_keys(SegmentLayout::compute(matrix_geometry()).bucket_count);
  std::array<bool, kFailStepCount> reached_somewhere{};
  unsigned kill_points = 0, state_steps = 0;
  for (const State state : kStates) {
    const char* state_name = kStateNames[static_cast<std::size_t>(state)];
    INFO("state: " << state_name);
    // Dry run: how often the script reaches each step from this state.
    std::array<std::uint32_t, kFailStepCount> reached{};
    {
      SegmentNameGuard guard(unique_segment_name("matrix"));
      prepare(guard.name(), state, keys, now);
      SharedScriptLog log;
      auto child = spawn_child([&] { return run_script(guard.name(), state, keys, now, log.get(), {}); }, 60);
      REQUIRE(wait_child(child, std::chrono::seconds(60)) == kChildOk);
      REQUIRE(log->finished.load() == 1);
      for (std::size_t s = 0; s < kFailStepCount; ++s) reached[s] = log->reached[s].load();
      check_after(guard.name(), keys, *log, now);
    }
    for (std::size_t s = 0; s < kFailStepCount; ++s) {
      if (reached[s] == 0) continue;
      reached_somewhere[s] = true;
      ++state_steps;
      std::vector<std::uint32_t> occurrences = {1};
      if (reached[s] > 2) occurrences.push_back((reached[s] + 1) / 2);
      if (reached[s] > 1) occurrences.push_back(reached[s]);
      for (const std::uint32_t n : occurrences) {
        INFO("writer killed at " << kFailStepNames[s] << ", occurrence " << n << " of " << reached[s]);
        SegmentNameGuard guard(unique_segment_name("matrix"));
        prepare(guard.name(), state, keys, now);
        SharedScriptLog log;
        const KillPoint kill{static_cast<FailStep>(s), n};
        auto child =
            spawn_child([&] { return run_script(guard.name(), state, keys, now, log.get(), kill); }, 60);
        REQUIRE(wait_child(child, std::chrono::seconds(60)) == 128 + SIGKILL);
        check_after(guard.name(), keys, *log, now);
        ++kill_points;
      }
    }
    std::string line;
    for (std::size_t s = 0; s < kFailStepCount; ++s)
      line += std::string(" ") + std::string(kFailStepNames[s]) + "=" + std::to_string(reached[s]);
    std::printf("crash matrix, state %s: steps reached (occurrences):%s\n", state_name, line.c_str());
  }
  unsigned steps_reached = 0;
  for (std::size_t s = 0; s < kFailStepCount; ++s) {
    INFO("failpoint " << kFailStepNames[s] << " is declared but no scripted write reaches it");
    CHECK(reached_somewhere[s]);
    steps_reached += reached_somewhere[s];
  }
  std::printf("crash matrix: %u of %zu failpoints reached; %u (state, step) pairs over %zu states; "
              "%u crash points (a writer killed, the next one checked)\n",
              steps_reached, kFailStepCount, state_steps, kStates.size(), kill_points);
  std::fflush(stdout);
}

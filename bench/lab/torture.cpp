// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/torture.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cache/cache.hpp"
#include "cache/segment.hpp"
#include "cache/segment_check.hpp"
#include "common/child_process.hpp"
#include "common/shared_anonymous.hpp"
#include "sim/workload/entry_generator.hpp"
#include "bench/lab/torture_value.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned kMaxChildren = 64;
constexpr std::chrono::seconds kProgressWait{5};
constexpr int kChildWrongRead = 11;

// Counters the children share with the parent (an anonymous shared mapping).
struct SharedCounters {
  std::atomic<std::uint64_t> reads{0}, hits{0}, wrong_reads{0};
  std::atomic<std::uint64_t> writes{0}, erases{0}, skipped_writes{0};
  std::array<std::atomic<std::uint64_t>, kMaxChildren> heartbeat{};
  std::atomic<int> wrong_claimed{0};
  char first_wrong[256] = {};
};


std::uint32_t now_s() { return static_cast<std::uint32_t>(::time(nullptr)); }

int reader_loop(const std::string& name, unsigned slot, std::uint64_t seed, const TortureOptions& o,
                SharedCounters& sh) {
  cache::Segment seg = cache::Segment::attach(name);
  cache::Cache c(seg, cache::SlotRole::worker, slot);
  sim::SplitMix64 rng(seed);
  cache::EntryCopy copy;
  for (;;) {
    const std::uint32_t k = static_cast<std::uint32_t>(rng.next() % o.keys);
    sh.reads.fetch_add(1, std::memory_order_relaxed);
    if (c.lookup(torture_key(k), now_s(), copy) == cache::LookupStatus::hit) {
      sh.hits.fetch_add(1, std::memory_order_relaxed);
      const std::string wrong = verify_torture_value(copy.span(), k);
      if (!wrong.empty()) {
        sh.wrong_reads.fetch_add(1);
        if (sh.wrong_claimed.exchange(1) == 0) std::strncpy(sh.first_wrong, wrong.c_str(), sizeof sh.first_wrong - 1);
      }
    }
    sh.heartbeat[slot].fetch_add(1, std::memory_order_relaxed);
  }
}

int writer_loop(const std::string& name, unsigned slot, std::uint16_t writer_id, std::uint64_t seed,
                const TortureOptions& o, SharedCounters& sh) {
  cache::Segment seg = cache::Segment::attach(name);
  cache::Cache c(seg, cache::SlotRole::worker, slot);
  sim::SplitMix64 rng(seed);
  for (std::uint32_t version = 1;; ++version) {
    const std::uint32_t k = static_cast<std::uint32_t>(rng.next() % o.keys);
    if (rng.next() % 1000 < 5) {
      c.erase(torture_key(k));
      sh.erases.fetch_add(1, std::memory_order_relaxed);
    } else {
      const std::uint32_t now = now_s();
      const auto st = c.insert_encoded(torture_key(k), encode_torture_value(k, version, writer_id, now), now);
      if (st == cache::InsertStatus::skipped) sh.skipped_writes.fetch_add(1, std::memory_order_relaxed);
      else sh.writes.fetch_add(1, std::memory_order_relaxed);
    }
    sh.heartbeat[slot].fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

TortureResult run_torture(const TortureOptions& o, std::ostream& log) {
  const unsigned children = o.readers + o.writers;
  if (children == 0 || children > kMaxChildren || o.writers == 0)
    throw std::invalid_argument("torture: 1-64 children, at least one writer");
  const std::string name = "dnsarena-torture-" + std::to_string(::getpid());
  cache::Geometry g;
  g.max_entries = o.keys;
  g.region_bytes = 4096;
  g.arena_bytes = std::uint64_t{o.regions} * g.region_bytes;
  g.stat_slots = kMaxChildren + 8;
  cache::Segment::remove(name);
  cache::Segment seg = cache::Segment::create(name, g);
  seg.set_remove_on_destroy(true);
  cache::Cache checker(seg, cache::SlotRole::tool);
  common::SharedAnonymous<SharedCounters> shared;
  SharedCounters& sh = *shared;
  TortureResult r;
  const std::uint64_t repairs_before = seg.header().repairs.load();

  std::vector<common::ChildProcess> kids(children);
  std::uint64_t spawned = 0;
  auto spawn = [&](unsigned slot) {
    const std::uint64_t seed = o.seed * 1'000'003 + spawned++;
    const bool writer = slot < o.writers;
    const auto writer_id = static_cast<std::uint16_t>(spawned);
    std::fflush(nullptr);
    kids[slot] = common::ChildProcess::run(
        [&, slot, seed, writer, writer_id] {
          return writer ? writer_loop(name, slot, writer_id, seed, o, sh) : reader_loop(name, slot, seed, o, sh);
        },
        0, 15);
  };
  for (unsigned s = 0; s < children; ++s) spawn(s);

  // Every child moved on, and writers got writes through, within kProgressWait.
  auto progress_check = [&](std::uint64_t round) {
    std::vector<std::uint64_t> before(children);
    for (unsigned s = 0; s < children; ++s) before[s] = sh.heartbeat[s].load();
    const std::uint64_t writes_before = sh.writes.load() + sh.erases.load();
    const auto give_up = Clock::now() + kProgressWait;
    for (;;) {
      bool all = sh.writes.load() + sh.erases.load() > writes_before;
      for (unsigned s = 0; s < children && all; ++s) all = sh.heartbeat[s].load() != before[s] || !kids[s].running();
      if (all) return;
      if (Clock::now() > give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ++r.stalls;
    if (r.first_stall.empty()) r.first_stall = "round " + std::to_string(round) + ": no progress in 5 s";
  };
  auto run_check = [&](std::uint64_t round, bool children_running) {
    const cache::CheckReport rep = cache::check_segment(checker);
    ++r.checks;
    if (!rep.ok()) {
      ++r.check_failures;
      if (r.first_check_problem.empty())
        r.first_check_problem = "round " + std::to_string(round) + ": " + (rep.problems.empty() ? "?" : rep.problems[0]);
    }
    if (children_running) progress_check(round);
  };

  sim::SplitMix64 rng(o.seed);
  const auto t0 = Clock::now();
  for (std::uint64_t round = 1; round <= o.rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng.range(100, 2000)));
    const bool kill_writer = o.readers == 0 || rng.next() % 4 != 0;
    const unsigned slot = kill_writer ? static_cast<unsigned>(rng.next() % o.writers)
                                      : o.writers + static_cast<unsigned>(rng.next() % o.readers);
    if (kids[slot].running()) {
      ::kill(kids[slot].pid(), SIGKILL);
      kids[slot].wait();
    }
    if (kids[slot].exit_code() == 128 + SIGKILL) {
      ++(kill_writer ? r.writers_killed : r.readers_killed);
    } else {
      ++r.children_failed;
      log << "torture: round " << round << ": a child ended by itself (" << kids[slot].exit_status() << ")\n";
    }
    spawn(slot);
    if (round % o.check_every == 0) run_check(round, true);
    if (round % 1000 == 0)
      log << "torture: " << round << " rounds, " << sh.wrong_reads.load() << " wrong reads, " << r.check_failures
          << " check failures, " << r.stalls << " stalls\n";
  }
  for (auto& k : kids) k.kill();
  run_check(o.rounds, false);  // the last writers were killed mid-work too
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.rounds = o.rounds;
  r.repairs = seg.header().repairs.load() - repairs_before;
  r.reads = sh.reads.load();
  r.hits = sh.hits.load();
  r.wrong_reads = sh.wrong_reads.load();
  r.writes = sh.writes.load();
  r.erases = sh.erases.load();
  r.skipped_writes = sh.skipped_writes.load();
  r.first_wrong_read = sh.first_wrong;
  return r;
}

}  // namespace dnsarena::bench

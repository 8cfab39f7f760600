// SPDX-License-Identifier: GPL-3.0-or-later
// kill -9: writers killed at random moments (DNSARENA_KILL_ROUNDS, default 200) while a
// reader and another writer go on; and a writer killed while it holds the writer lock.
// Afterwards: no deadlock (every wait is bounded), the segment checks sound, the canary
// is still there.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "cache/test_hooks.hpp"
#include "child_process.hpp"
#include "role_children.hpp"
#include "sim/workload/entry_generator.hpp"
#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

constexpr std::uint32_t kKeys = 2000;
constexpr std::uint32_t kCanaryKey = 999'999;  // outside the writers' key range

// In a child: attach, insert one value and run the invariant walker.
int probe_after_kills(const std::string& name) {
  Segment seg = Segment::attach(name);
  Cache c(seg, SlotRole::tool);
  const std::uint32_t now = wall_clock_now();
  if (c.insert_encoded(verifiable_key(1), encode_verifiable({1, 1, 77}, now), now) == InsertStatus::rejected)
    return kChildRejected;
  if (!check_segment(c).ok()) return kChildCheckFailed;
  return verify_canary(c, kCanaryKey);
}

}  // namespace

TEST_CASE("kill -9 writers at random moments: no deadlock, check passes, canary kept", "[multiprocess][kill]") {
  const unsigned rounds = env_unsigned("DNSARENA_KILL_ROUNDS", 200);
  // Big enough that nothing is evicted during the run (the canary must stay), small
  // regions so that writers often seal regions while they may be killed.
  // About 130 KB are written per round (release build): the arena grows with the rounds.
  TestSegment ts(tiny_geometry(400'000 + 400 * rounds, 256 * 1024, 512 + rounds * 3 / 4), "kill");
  const std::string name = ts.name();
  {
    Cache c(ts.seg);
    insert_canary(c, kCanaryKey);
  }
  SharedStopFlag stop;
  SharedStopFlag victim_writing;  // set by a victim once it is attached and about to write
  auto should_stop = [&stop] { return stop.is_set(); };
  RoleConfig reader_cfg;
  reader_cfg.keys = kKeys;
  reader_cfg.seed = 7;
  reader_cfg.has_canary = true;
  reader_cfg.canary_key = kCanaryKey;
  reader_cfg.should_stop = should_stop;
  common::ChildProcess reader = spawn_role(Role::reader, name, 1, reader_cfg, 240);
  RoleConfig survivor_cfg;
  survivor_cfg.keys = kKeys;
  survivor_cfg.writer_id = 1;
  survivor_cfg.seed = 8;
  survivor_cfg.should_stop = [&] {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // paced: the victims write most
    return stop.is_set();
  };
  common::ChildProcess survivor = spawn_role(Role::writer, name, 2, survivor_cfg, 240);

  sim::SplitMix64 rng(2024);
  const std::uint64_t repairs_before = ts.seg.header().repairs.load();
  unsigned killed = 0, exited_early = 0;
  for (unsigned round = 0; round < rounds; ++round) {
    RoleConfig victim_cfg;
    victim_cfg.keys = kKeys;
    victim_cfg.writer_id = static_cast<std::uint16_t>(100 + round);
    victim_cfg.seed = 100 + round;
    victim_cfg.erase_per_mille = 20;
    common::ChildProcess victim = spawn_victim_writer(name, victim_cfg, victim_writing);
    // Most kills land while the victim writes (the random delay counts from its first
    // write, so slow builds such as ASan kill writers too, not just starting processes);
    // one round in eight kills it wherever it is, attach included.
    if (round % 8 != 0) wait_until_writing(victim_writing);
    std::this_thread::sleep_for(std::chrono::microseconds(rng.range(0, 1500)));
    ::kill(victim.pid(), SIGKILL);
    const int code = wait_child(victim, std::chrono::seconds(10));
    if (code == 128 + SIGKILL) ++killed;
    else ++exited_early;
    INFO("round " << round << ": victim exit code " << code);
    REQUIRE((code == 128 + SIGKILL || code == kChildOk));
  }
  stop.set();
  const int reader_code = wait_child(reader, std::chrono::seconds(30));
  const int survivor_code = wait_child(survivor, std::chrono::seconds(30));
  INFO("reader exit code " << reader_code << ", surviving writer exit code " << survivor_code);
  CHECK(reader_code == kChildOk);
  CHECK(survivor_code == kChildOk);
  REQUIRE(killed >= rounds * 9 / 10);

  // No deadlock: a fresh process can write and check within a bounded time.
  common::ChildProcess probe = spawn_child([&] { return probe_after_kills(name); }, 20);
  const int probe_code = wait_child(probe, std::chrono::seconds(30));
  INFO("probe exit code " << probe_code << " (-1: timed out, a deadlock)");
  REQUIRE(probe_code == kChildOk);

  Cache c(ts.seg, SlotRole::tool);
  check_invariants(c);
  REQUIRE(verify_canary(c, kCanaryKey) == kChildOk);
  const CacheStats st = c.stats();
  const std::uint64_t repairs = ts.seg.header().repairs.load() - repairs_before;
  std::printf("kill -9: %u rounds, %u killed; %llu repairs after a dead lock owner; %llu inserts, %llu hits, "
              "%llu evictions, %llu bytes in use\n",
              rounds, killed, static_cast<unsigned long long>(repairs),
              static_cast<unsigned long long>(st.counter(Counter::inserts)),
              static_cast<unsigned long long>(st.counter(Counter::hits)),
              static_cast<unsigned long long>(st.counter(Counter::evictions)),
              static_cast<unsigned long long>(st.bytes_in_use));
  // The premise of the canary check: the arena never had to evict.
  REQUIRE(st.counter(Counter::evictions) == 0);
}

TEST_CASE("a writer killed while holding the writer lock: the next writer repairs and goes on",
          "[multiprocess][kill]") {
  TestSegment ts(tiny_geometry(1000, 1024, 6), "lockkill");
  const std::string name = ts.name();
  Cache c(ts.seg);
  // Some entries across a few regions, so a reclaim has something to do.
  for (std::uint32_t k = 0; k < 12; ++k) {
    const std::uint32_t now = wall_clock_now();
    REQUIRE(c.insert_encoded(verifiable_key(k), encode_verifiable({k, 1, 1}, now), now) != InsertStatus::rejected);
  }
  check_invariants(c);
  SegmentHeader& h = ts.seg.header();
  const std::uint64_t repairs_before = h.repairs.load();

  const int mode = GENERATE(0, 1, 2);
  INFO("mode " << mode << " (0: just die; 1: die with counters off; 2: die in the middle of a reclaim)");
  common::ChildProcess victim = spawn_child([&] {
    Segment seg = Segment::attach(name);
    Cache vc(seg);
    CacheTestHooks::with_writer_lock(vc, [&] {
      SegmentHeader& vh = seg.header();
      if (mode >= 1) {  // what a writer killed between two steps leaves behind
        vh.live_entries.fetch_add(7);
        vh.bytes_in_use.fetch_add(64);
      }
      if (mode == 2) {
        const std::uint64_t hf = vh.head_and_free.load();
        const std::uint32_t tail = (head_of(hf) + 1 + free_of(hf)) % seg.layout().region_count;
        vh.reclaiming_region.store(tail);
      }
      ::raise(SIGKILL);
    });
    return kChildException;  // not reached
  }, 10);
  REQUIRE(wait_child(victim, std::chrono::seconds(10)) == 128 + SIGKILL);

  // The next writer (in another process, bounded) gets the lock and repairs.
  common::ChildProcess next = spawn_child([&] {
    Segment seg = Segment::attach(name);
    Cache nc(seg);
    const std::uint32_t now = wall_clock_now();
    return nc.insert_encoded(verifiable_key(500), encode_verifiable({500, 1, 2}, now), now) == InsertStatus::rejected
               ? kChildRejected
               : kChildOk;
  }, 10);
  REQUIRE(wait_child(next, std::chrono::seconds(15)) == kChildOk);
  REQUIRE(h.repairs.load() == repairs_before + 1);
  REQUIRE(h.reclaiming_region.load() == kNoRegion);
  check_invariants(c);
  // And this process can still write and read.
  const std::uint32_t now = wall_clock_now();
  REQUIRE(c.insert_encoded(verifiable_key(501), encode_verifiable({501, 1, 3}, now), now) != InsertStatus::rejected);
  EntryCopy copy;
  REQUIRE(c.lookup(verifiable_key(500), now, copy) == LookupStatus::hit);
  REQUIRE(verify_entry(copy.span(), 500).empty());
  REQUIRE(c.lookup(verifiable_key(501), now, copy) == LookupStatus::hit);
  check_invariants(c);
}

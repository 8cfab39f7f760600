// SPDX-License-Identifier: GPL-3.0-or-later
// Readers and writers as threads of one process, one Cache per thread, on one segment
// (the configuration ThreadSanitizer can see). DNSARENA_THREAD_MS sets the duration
// (default 1000 ms). Readers verify every hit byte-exact, as in the multi-process test.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "concurrent_roles.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

TEST_CASE("threads: concurrent writers and readers, every hit byte-exact", "[threads]") {
  const unsigned ms = env_unsigned("DNSARENA_THREAD_MS", 1000);
  const std::uint32_t keys = GENERATE(64u, 5000u);  // hot keys replaced in place / constant recycling
  INFO(keys << " keys, " << ms << " ms");
  TestSegment ts(tiny_geometry(3000, 16 * 1024, 16), "threads");
  std::atomic<bool> stop{false};
  auto should_stop = [&stop] { return stop.load(std::memory_order_relaxed); };
  constexpr int kWriters = 2, kReaders = 2;
  std::vector<int> codes(kWriters + kReaders, -1);
  std::vector<RoleStats> stats(kWriters + kReaders);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters + kReaders; ++i) {
    threads.emplace_back([&, i] {
      Cache c(ts.seg, SlotRole::worker, static_cast<std::uint64_t>(i));  // one Cache per thread
      RoleConfig cfg;
      cfg.keys = keys;
      cfg.seed = 300 + static_cast<std::uint64_t>(i);
      cfg.writer_id = static_cast<std::uint16_t>(i + 1);
      cfg.with_probes = true;
      cfg.should_stop = should_stop;
      codes[i] = i < kWriters ? run_writer(c, cfg, &stats[i]) : run_reader(c, cfg, &stats[i]);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop.store(true);
  for (auto& t : threads) t.join();
  for (int i = 0; i < kWriters + kReaders; ++i) {
    INFO((i < kWriters ? "writer " : "reader ") << i << ": code " << codes[i] << ", " << stats[i].operations
                                                << " operations, " << stats[i].hits << " hits");
    CHECK(codes[i] == kChildOk);
  }
  Cache c(ts.seg, SlotRole::tool);
  check_invariants(c);
  const CacheStats st = c.stats();
  std::printf("threads (%u keys): %llu lookups, %llu hits, %llu inserts, %llu retries\n", keys,
              static_cast<unsigned long long>(st.counter(Counter::lookups)),
              static_cast<unsigned long long>(st.counter(Counter::hits)),
              static_cast<unsigned long long>(st.counter(Counter::inserts)),
              static_cast<unsigned long long>(st.counter(Counter::lookup_retries)));
}

TEST_CASE("threads: counters never lose increments when stat slots run out", "[threads][stats]") {
  // Two slots for three Cache objects: the third has to share. Whoever counts into a
  // shared slot, and whoever owns it, every increment must arrive.
  Geometry g = tiny_geometry(1000, 4096, 4);
  g.stat_slots = 2;
  TestSegment ts(g, "slots");
  Cache first(ts.seg), second(ts.seg), third(ts.seg);
  const unsigned n = env_unsigned("DNSARENA_COUNT_ADDS", 20'000'000);
  std::thread a([&] {
    for (unsigned i = 0; i < n; ++i) second.count(Counter::lookups);
  });
  std::thread b([&] {
    for (unsigned i = 0; i < n; ++i) third.count(Counter::lookups);
  });
  for (unsigned i = 0; i < n; ++i) first.count(Counter::lookups);
  a.join();
  b.join();
  CHECK(first.stats().counter(Counter::lookups) == 3ull * n);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The simulator's entry points (cache/cache_trace_run.cpp) against the existing path:
// probe_at + insert_encoded_held under a WriterHold must give what probe + insert_encoded
// give, operation by operation (statuses), and leave the same counters, index (slots,
// hit bits) and arena bytes, on a tiny cache where reclaims, second chances, expiry,
// cuckoo steps and conflict evictions run all the time, with the real hash and with
// one that makes every key collide.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cache/cache_lab_hooks.hpp"
#include "cache/test_hooks.hpp"
#include "sim/workload/entry_generator.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

// Keys of every form the simulator builds, and short ones (blob < 8 bytes: the copying
// probe) and ECS ones.
std::vector<CacheKey> trace_keys(std::size_t n) {
  std::vector<CacheKey> keys;
  keys.emplace_back(wire_name("a"), kA);  // blob of 8 bytes: 5 + 3
  keys.emplace_back(wire_name("."), kA);  // the root: blob of 6 bytes
  for (std::size_t i = 0; keys.size() < n; ++i) {
    const std::string name = "n" + std::to_string(i) + (i % 3 == 0 ? ".example" : ".e");
    if (i % 7 == 0) {
      EcsTag ecs;
      ecs.family = EcsFamily::ipv4;
      ecs.prefix = 24;
      ecs.address = {10, 0, static_cast<std::uint8_t>(i), 0};
      keys.emplace_back(wire_name(name), kA, 0, ecs);
    } else {
      keys.emplace_back(wire_name(name), i % 2 ? kTXT : kAAAA);
    }
  }
  return keys;
}

// The padded entry of key k (sizes vary, so regions fill unevenly).
std::vector<std::uint8_t> encoded(const CacheKey& key, std::size_t k, std::uint32_t ttl, std::uint32_t now) {
  OwnedAnswer a;
  a.ttl = ttl;
  a.add(kAnswer, {}, kTXT, ttl, Bytes(20 + (k * 37) % 300, 'x'));
  std::vector<std::uint8_t> out;
  REQUIRE(encode_entry(key, a.answer(), now, out) != 0);
  return out;
}

bool same_bytes(const void* a, const void* b, std::size_t n) { return std::memcmp(a, b, n) == 0; }

void run_both(bool colliding) {
  const Geometry g = tiny_geometry(120, 4096, 6);
  TestSegment sa(g, "trace-a"), sb(g, "trace-b");
  Cache a(sa.seg), b(sb.seg);
  if (colliding)
    for (Cache* c : {&a, &b})
      CacheTestHooks::set_hash_override(*c, [](const CacheKey& k) { return 0x1234'5678'0000'0000ull | (k.hash() & 1); });
  const std::vector<CacheKey> keys = trace_keys(400);
  sim::SplitMix64 rng(colliding ? 7 : 3);
  std::uint32_t now = kNow;
  for (int round = 0; round < 60; ++round) {
    CacheLabHooks::WriterHold hold(b);
    REQUIRE(hold.owns());
    for (int i = 0; i < 100; ++i) {
      // A Zipf-like skew: low indices often (hits, second chances), the rest seldom.
      const std::size_t k = rng.next() % 2 ? rng.next() % 20 : rng.next() % keys.size();
      const CacheKey& key = keys[k];
      const IndexPosition pos = CacheLabHooks::prefetch_position(b, key);
      const LookupStatus pa = a.probe(key, now);
      const LookupStatus pb = CacheLabHooks::probe_at(b, key, pos, now);
      INFO("round " << round << " op " << i << " key " << k);
      REQUIRE(pa == pb);
      if (pa != LookupStatus::hit) {
        const auto bytes = encoded(key, k, 5 + static_cast<std::uint32_t>(rng.next() % 200), now);
        REQUIRE(a.insert_encoded(key, bytes, now) == CacheLabHooks::insert_encoded_held(b, hold, key, bytes, now));
      }
      now += static_cast<std::uint32_t>(rng.next() % 3);
    }
    // The same state after every round: header counters, stat counters, index and arena.
    const CacheStats x = a.stats(), y = b.stats();
    REQUIRE(x.live_entries == y.live_entries);
    REQUIRE(x.bytes_in_use == y.bytes_in_use);
    REQUIRE(x.counters == y.counters);
    REQUIRE(same_bytes(sa.seg.buckets(), sb.seg.buckets(), sa.seg.layout().bucket_count * sizeof(Bucket)));
    REQUIRE(same_bytes(sa.seg.regions(), sb.seg.regions(), sa.seg.layout().region_count * sizeof(RegionDesc)));
    REQUIRE(same_bytes(sa.seg.arena(), sb.seg.arena(), sa.seg.layout().arena_bytes()));
  }
  const CacheStats st = b.stats();
  CHECK(st.counter(Counter::hits) > 0);
  CHECK(st.counter(Counter::expired_on_lookup) > 0);
  if (colliding) {
    CHECK(st.counter(Counter::conflict_evictions) > 0);  // 16 slots for every key
  } else {
    CHECK(st.counter(Counter::evictions) > 0);
    CHECK(st.counter(Counter::second_chances) > 0);
  }
  check_invariants(a);
  check_invariants(b);
}
}  // namespace

TEST_CASE("probe_at and held inserts equal probe and insert_encoded, op by op and byte for byte", "[trace_run]") {
  SECTION("real hash") { run_both(false); }
  SECTION("every key in the same two buckets") { run_both(true); }
}

TEST_CASE("a hold that did not get the lock skips its inserts and counts them", "[trace_run]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache holder(ts.seg), c(ts.seg);
  c.set_writer_lock_timeout(std::chrono::milliseconds(20));
  const CacheKey key(wire_name("held.example"), kA);
  const auto bytes = encoded(key, 1, 60, kNow);
  std::atomic<bool> locked{false}, release{false};
  std::thread t([&] {
    CacheTestHooks::with_writer_lock(holder, [&] {
      locked = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  });
  while (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    CacheLabHooks::WriterHold hold(c);
    CHECK_FALSE(hold.owns());
    CHECK(CacheLabHooks::insert_encoded_held(c, hold, key, bytes, kNow) == InsertStatus::skipped);
    CHECK(c.stats().counter(Counter::writer_lock_unavailable) == 1);
  }
  release = true;
  t.join();
  {
    CacheLabHooks::WriterHold hold(c);
    REQUIRE(hold.owns());
    CHECK(CacheLabHooks::insert_encoded_held(c, hold, key, bytes, kNow) == InsertStatus::inserted);
    CHECK(CacheLabHooks::probe_at(c, key, CacheLabHooks::prefetch_position(c, key), kNow) == LookupStatus::hit);
    CHECK(CacheLabHooks::insert_encoded_held(c, hold, key, {}, kNow) == InsertStatus::rejected);
  }
  check_invariants(c);  // takes the writer lock: after the hold
}

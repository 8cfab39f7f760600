// SPDX-License-Identifier: GPL-3.0-or-later
// Eviction at capacity: the entry-count limit, the byte limit, expirations, and the
// second chance for entries hit since they were written.
#include <catch2/catch.hpp>

#include "cache/failpoint.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {


CacheKey key_of(std::uint32_t i) { return CacheKey(wire_name("e" + std::to_string(i) + ".evict.test"), kA); }

OwnedAnswer answer_of(std::uint32_t i, std::uint32_t ttl = 3600) {
  OwnedAnswer a;
  a.ttl = ttl;
  a.add(kAnswer, {}, kA, ttl, bytes_of({10, int(i >> 16) & 255, int(i >> 8) & 255, int(i & 255)}));
  return a;
}

std::uint32_t head_region(Cache& c) { return head_of(c.segment().header().head_and_free.load()); }

// Without erases, every entry ever inserted is either still live or was counted leaving.
void require_entries_conserved(Cache& c) {
  const CacheStats st = c.stats();
  INFO("inserts " << st.counter(Counter::inserts) << " replaces " << st.counter(Counter::replaces) << " live "
                  << st.live_entries << " evictions " << st.counter(Counter::evictions) << " conflict evictions "
                  << st.counter(Counter::conflict_evictions) << " expirations " << st.counter(Counter::expirations));
  REQUIRE(st.counter(Counter::inserts) - st.counter(Counter::replaces) ==
          st.live_entries + st.counter(Counter::evictions) + st.counter(Counter::conflict_evictions) +
              st.counter(Counter::expirations));
}

}  // namespace

TEST_CASE("count limit: live entries never exceed max_entries", "[eviction]") {
  TestSegment ts(tiny_geometry(50, 4096, 16));  // bytes are plentiful, the count is the limit
  Cache c(ts.seg);
  EntryCopy copy;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    REQUIRE(c.insert(key_of(i), answer_of(i).answer(), kNow) == InsertStatus::inserted);
    REQUIRE(c.stats().live_entries <= 50);
    REQUIRE(c.lookup(key_of(i), kNow, copy) == LookupStatus::hit);  // the newest is always there
    require_entry_matches(copy.span(), key_of(i).qname(), answer_of(i).answer());
    if (i % 100 == 0) check_invariants(c);
  }
  const CacheStats st = c.stats();
  REQUIRE(st.counter(Counter::evictions) + st.counter(Counter::conflict_evictions) >= 2000 - 50);
  require_entries_conserved(c);
  REQUIRE(st.counter(Counter::expirations) == 0);
  REQUIRE(st.live_entries >= 1);
  check_invariants(c);
}

TEST_CASE("byte limit: a tiny arena evicts to make room", "[eviction]") {
  TestSegment ts(tiny_geometry(100000, 1024, 3));  // 3 KiB of arena, the bytes are the limit
  Cache c(ts.seg);
  std::vector<std::uint8_t> probe;
  const std::size_t entry_bytes = padded_entry_size(encode_entry(key_of(0), answer_of(0).answer(), kNow, probe));
  EntryCopy copy;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    REQUIRE(c.insert(key_of(i), answer_of(i).answer(), kNow) == InsertStatus::inserted);
    const CacheStats st = c.stats();
    REQUIRE(st.bytes_in_use <= st.arena_bytes);
    REQUIRE(st.live_entries * entry_bytes <= st.arena_bytes);
    REQUIRE(c.lookup(key_of(i), kNow, copy) == LookupStatus::hit);
    if (i % 250 == 0) check_invariants(c);
  }
  REQUIRE(c.stats().counter(Counter::evictions) >= 3000 - 3 * 1024 / entry_bytes);
  // Old entries are gone, recent ones (still in the newest region) are there.
  REQUIRE(c.lookup(key_of(0), kNow, copy) == LookupStatus::miss);
  REQUIRE(c.lookup(key_of(2999), kNow, copy) == LookupStatus::hit);
  require_entries_conserved(c);
  check_invariants(c);
}

TEST_CASE("reclaim drops expired entries and counts them as expirations", "[eviction][ttl]") {
  TestSegment ts(tiny_geometry(100000, 1024, 4));
  Cache c(ts.seg);
  for (std::uint32_t i = 0; i < 200; ++i)
    REQUIRE(c.insert(key_of(i), answer_of(i, 10).answer(), kNow) != InsertStatus::rejected);
  const CacheStats before = c.stats();
  // 100 s later every old entry has expired: reclaiming them is expiry, not eviction.
  for (std::uint32_t i = 1000; i < 1200; ++i)
    REQUIRE(c.insert(key_of(i), answer_of(i).answer(), kNow + 100) != InsertStatus::rejected);
  const CacheStats after = c.stats();
  REQUIRE(after.counter(Counter::expirations) > before.counter(Counter::expirations));
  EntryCopy copy;
  for (std::uint32_t i = 0; i < 200; ++i) REQUIRE(c.lookup(key_of(i), kNow + 100, copy) != LookupStatus::hit);
  require_entries_conserved(c);
  check_invariants(c);
}

TEST_CASE("second chance: entries hit since they were written survive the reclaim of their region",
          "[eviction]") {
  TestSegment ts(tiny_geometry(100000, 1024, 4));
  Cache c(ts.seg);
  EntryCopy copy;
  // Fill region 0 exactly: every entry inserted while the head is still region 0.
  std::vector<std::uint32_t> region0;
  std::uint32_t next = 0;
  for (;; ++next) {
    REQUIRE(c.insert(key_of(next), answer_of(next).answer(), kNow) == InsertStatus::inserted);
    if (head_region(c) != 0) break;
    region0.push_back(next);
  }
  ++next;
  REQUIRE(region0.size() >= 10);
  // Look up every even one: those are "hit since written".
  std::vector<std::uint32_t> hit, cold;
  for (std::size_t j = 0; j < region0.size(); ++j) {
    if (j % 2 == 0) {
      REQUIRE(c.lookup(key_of(region0[j]), kNow, copy) == LookupStatus::hit);
      hit.push_back(region0[j]);
    } else {
      cold.push_back(region0[j]);
    }
  }
  // Insert until region 0 is reclaimed (the first reclaim of the run).
  const CacheStats before = c.stats();
  REQUIRE(before.counter(Counter::evictions) == 0);
  REQUIRE(before.counter(Counter::second_chances) == 0);
  const std::uint64_t gen0 = ts.seg.regions()[0].generation.load();
  while (ts.seg.regions()[0].generation.load() == gen0) {
    REQUIRE(next < 100000);
    REQUIRE(c.insert(key_of(next), answer_of(next).answer(), kNow) == InsertStatus::inserted);
    ++next;
  }
  const CacheStats after = c.stats();
  REQUIRE(after.counter(Counter::second_chances) == hit.size());
  REQUIRE(after.counter(Counter::evictions) >= cold.size());
  REQUIRE(after.counter(Counter::expirations) == 0);
  for (std::uint32_t k : hit) {
    INFO("hit entry " << k);
    REQUIRE(c.lookup(key_of(k), kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), key_of(k).qname(), answer_of(k).answer());
  }
  for (std::uint32_t k : cold) {
    INFO("cold entry " << k);
    REQUIRE(c.lookup(key_of(k), kNow, copy) == LookupStatus::miss);
  }
  check_invariants(c);

  SECTION("a second chance is one chance: not hit again, the survivor goes next time") {
    // The survivors' hit bits were cleared when they were copied; without new hits,
    // cycling the whole ring once more evicts them.
    const std::uint32_t stop = next + 200;
    for (; next < stop; ++next) REQUIRE(c.insert(key_of(next), answer_of(next).answer(), kNow) == InsertStatus::inserted);
    for (std::uint32_t k : hit) REQUIRE(c.lookup(key_of(k), kNow, copy) == LookupStatus::miss);
    check_invariants(c);
  }
}

TEST_CASE("erase unlinks at once and the bytes are reclaimed later", "[eviction]") {
  TestSegment ts(tiny_geometry(100, 1024, 4));
  Cache c(ts.seg);
  EntryCopy copy;
  REQUIRE(c.insert(key_of(1), answer_of(1).answer(), kNow) == InsertStatus::inserted);
  REQUIRE(c.insert(key_of(2), answer_of(2).answer(), kNow) == InsertStatus::inserted);
  REQUIRE(c.erase(key_of(1)));
  REQUIRE_FALSE(c.erase(key_of(1)));
  REQUIRE(c.lookup(key_of(1), kNow, copy) == LookupStatus::miss);
  REQUIRE(c.lookup(key_of(2), kNow, copy) == LookupStatus::hit);
  REQUIRE(c.stats().live_entries == 1);
  check_invariants(c);
  for (std::uint32_t i = 10; i < 400; ++i) REQUIRE(c.insert(key_of(i), answer_of(i).answer(), kNow) != InsertStatus::rejected);
  REQUIRE(c.lookup(key_of(1), kNow, copy) == LookupStatus::miss);  // never resurrected
  check_invariants(c);
}

TEST_CASE("a full arena whose entries readers re-mark hot during every reclaim still evicts, never throws",
          "[eviction]") {
  // Readers that hit every entry faster than reclaim walks the ring would give every entry
  // a second chance forever. The failpoint plays those readers: before each entry of each
  // reclaim, every key is looked up again (setting its hit bit, also on the copies just
  // made). Inserts must still evict.
  TestSegment ts(tiny_geometry(100000, 4096, 4));
  Cache c(ts.seg);
  std::uint32_t n = 0;
  while (free_of(ts.seg.header().head_and_free.load()) > 1) {
    REQUIRE(c.insert(key_of(n), answer_of(n).answer(), kNow) == InsertStatus::inserted);
    ++n;
  }
  const std::uint32_t filled = n;
  EntryCopy copy;
  unsigned reclaim_steps = 0;
  set_failpoint([&](FailStep step, std::uint64_t) {
    if (step != FailStep::reclaim_entry) return;
    ++reclaim_steps;
    for (std::uint32_t k = 0; k < n; ++k) c.lookup(key_of(k), kNow, copy);
  });
  for (std::uint32_t i = 0; i < 2 * filled; ++i, ++n) {
    INFO("insert " << i << " into a full arena of hot entries");
    REQUIRE_NOTHROW(c.insert(key_of(n), answer_of(n).answer(), kNow));
    REQUIRE(c.lookup(key_of(n), kNow, copy) == LookupStatus::hit);
  }
  set_failpoint({});
  INFO(reclaim_steps << " reclaim steps");
  CHECK(reclaim_steps > 0);
  CHECK(c.stats().counter(Counter::evictions) > 0);
  check_invariants(c);
}

TEST_CASE("a full entry limit of hot entries still makes room, never throws", "[eviction]") {
  // The same starvation through the live-entry limit (make_room_for_one).
  TestSegment ts(tiny_geometry(40, 4096, 8));
  Cache c(ts.seg);
  std::uint32_t n = 0;
  for (; n < 40; ++n) REQUIRE(c.insert(key_of(n), answer_of(n).answer(), kNow) == InsertStatus::inserted);
  EntryCopy copy;
  set_failpoint([&](FailStep step, std::uint64_t) {
    if (step == FailStep::reclaim_entry)
      for (std::uint32_t k = 0; k < n; ++k) c.lookup(key_of(k), kNow, copy);
  });
  for (std::uint32_t i = 0; i < 200; ++i, ++n) {
    INFO("insert " << i << " at the entry limit, every entry hot");
    REQUIRE_NOTHROW(c.insert(key_of(n), answer_of(n).answer(), kNow));
    REQUIRE(c.stats().live_entries <= 40);
  }
  set_failpoint({});
  check_invariants(c);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// probe(): the simulator's presence lookup must agree with lookup() in every outcome,
// count the same counters and set the same hit bit; prefetch hints change nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cache/cache_lab_hooks.hpp"
#include "cache/test_hooks.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

OwnedAnswer answer_with_ttl(std::uint32_t ttl, std::uint8_t last_octet, std::size_t txt_bytes = 0) {
  OwnedAnswer a;
  a.ttl = ttl;
  a.add(kAnswer, {}, kA, ttl, bytes_of({192, 0, 2, last_octet}));
  if (txt_bytes) a.add(kAnswer, {}, kTXT, ttl, Bytes(txt_bytes, 'x'));
  return a;
}

// Ten keys whose hashes are all equal (the tag cannot tell them apart, only the key
// compare can); the even ones inserted, the i-th with an i*txt_step-byte TXT record.
std::vector<CacheKey> colliding_keys_half_inserted(Cache& c, const std::string& prefix, std::size_t txt_step) {
  CacheTestHooks::set_hash_override(c, [](const CacheKey&) { return std::uint64_t{0x1234'5678'9ABC'DEF0}; });
  std::vector<CacheKey> keys;
  for (int i = 0; i < 10; ++i) keys.emplace_back(wire_name(prefix + std::to_string(i) + ".example"), kA);
  for (int i = 0; i < 10; i += 2)
    REQUIRE(c.insert(keys[i], answer_with_ttl(60, static_cast<std::uint8_t>(i), txt_step * i).answer(), kNow) !=
            InsertStatus::rejected);
  return keys;
}
}  // namespace

TEST_CASE("probe agrees with lookup: hit, expired, miss, same counters", "[probe]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  const CacheKey key(wire_name("probe.example"), kA);
  const CacheKey other(wire_name("other.example"), kA);
  const CacheKey other_type(wire_name("probe.example"), kAAAA);
  // A long entry: probe copies only the header and key, the comparison must still hold.
  REQUIRE(c.insert(key, answer_with_ttl(300, 1, 900).answer(), kNow) == InsertStatus::inserted);

  CHECK(c.probe(key, kNow) == LookupStatus::hit);
  CHECK(c.probe(key, kNow + 299) == LookupStatus::hit);
  CHECK(c.probe(key, kNow + 300) == LookupStatus::expired);
  CHECK(c.probe(other, kNow) == LookupStatus::miss);
  CHECK(c.probe(other_type, kNow) == LookupStatus::miss);
  const CacheStats st = c.stats();
  CHECK(st.counter(Counter::lookups) == 5);
  CHECK(st.counter(Counter::hits) == 2);
  CHECK(st.counter(Counter::misses) == 3);
  CHECK(st.counter(Counter::expired_on_lookup) == 1);
  check_invariants(c);
}

TEST_CASE("probe tells colliding keys apart (every hash equal)", "[probe]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  const std::vector<CacheKey> keys = colliding_keys_half_inserted(c, "k", 0);
  EntryCopy copy;
  for (int i = 0; i < 10; ++i) {
    INFO("key " << i);
    const LookupStatus by_lookup = c.lookup(keys[i], kNow, copy);
    CHECK(c.probe(keys[i], kNow) == by_lookup);
  }
  check_invariants(c);
}

TEST_CASE("a probe hit buys the second chance, as a lookup hit does", "[probe]") {
  // 4 regions of 4 KiB; each entry ~600 B: filling more than the arena forces reclaims.
  TestSegment ts(tiny_geometry(1000, 4096, 4));
  Cache c(ts.seg);
  const CacheKey hot(wire_name("hot.example"), kA);
  REQUIRE(c.insert(hot, answer_with_ttl(3600, 1, 500).answer(), kNow) == InsertStatus::inserted);
  std::uint32_t now = kNow;
  for (int i = 0; i < 200; ++i) {
    // The hot key is probed between inserts of cold keys; it must stay cached throughout.
    INFO("round " << i);
    REQUIRE(c.probe(hot, now) == LookupStatus::hit);
    const CacheKey cold(wire_name("cold" + std::to_string(i) + ".example"), kA);
    REQUIRE(c.insert(cold, answer_with_ttl(3600, 2, 500).answer(), now) != InsertStatus::rejected);
    ++now;
  }
  CHECK(c.stats().counter(Counter::second_chances) > 0);
  CHECK(c.stats().counter(Counter::evictions) > 0);
  check_invariants(c);
}

TEST_CASE("prefetch hints change nothing", "[probe]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  const CacheKey in(wire_name("in.example"), kA);
  const CacheKey out(wire_name("out.example"), kA);
  REQUIRE(c.insert(in, answer_with_ttl(60, 1).answer(), kNow) == InsertStatus::inserted);
  for (const CacheKey* k : {&in, &out}) {
    c.prefetch_buckets_of(*k);
    c.prefetch_entries_of(*k);
  }
  CHECK(c.stats().counter(Counter::lookups) == 0);
  CHECK(c.probe(in, kNow) == LookupStatus::hit);
  CHECK(c.probe(out, kNow) == LookupStatus::miss);
  check_invariants(c);
}

TEST_CASE("lookup_footprint names the buckets and the very entry a lookup reads, and nothing on a miss", "[probe][footprint]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  // Every hash equal: the footprint must tell the keys apart by the key, not the tag.
  const std::vector<CacheKey> keys = colliding_keys_half_inserted(c, "f", 20);
  const std::uint64_t lookups_before = c.stats().counter(Counter::lookups);
  const LookupFootprint first = CacheLabHooks::lookup_footprint(c, keys[0]);
  EntryCopy copy;
  for (int i = 0; i < 10; ++i) {
    INFO("key " << i);
    const LookupFootprint f = CacheLabHooks::lookup_footprint(c, keys[i]);
    // The same hash: the same two buckets for every key, inside the segment.
    CHECK(f.buckets[0] == first.buckets[0]);
    CHECK(f.buckets[1] == first.buckets[1]);
    for (const void* b : f.buckets) {
      CHECK(static_cast<const std::uint8_t*>(b) >= ts.seg.base());
      CHECK(static_cast<const std::uint8_t*>(b) < ts.seg.base() + ts.seg.size());
    }
    if (i % 2 == 1) {
      CHECK(f.entry == nullptr);
      CHECK(f.entry_bytes == 0);
      continue;
    }
    REQUIRE(f.entry != nullptr);
    REQUIRE(c.lookup(keys[i], kNow, copy) == LookupStatus::hit);
    CHECK(f.entry_bytes == copy.length);
    CHECK(std::equal(copy.bytes.begin(), copy.bytes.begin() + copy.length, f.entry));
  }
  // It counts nothing (the lookups above are the only ones counted).
  CHECK(c.stats().counter(Counter::lookups) == lookups_before + 5);
  REQUIRE(c.erase(keys[2]));
  CHECK(CacheLabHooks::lookup_footprint(c, keys[2]).entry == nullptr);
  check_invariants(c);
}

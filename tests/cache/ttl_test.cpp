// SPDX-License-Identifier: GPL-3.0-or-later
// TTL: an expired entry is never returned; a hit reports the remaining TTL.
#include <catch2/catch.hpp>

#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {
}

TEST_CASE("an entry is a hit before its expiry and expired from then on", "[ttl]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kA, 300, bytes_of({192, 0, 2, 1}));
  const CacheKey key(wire_name("ttl.example"), kA);
  REQUIRE(c.insert(key, a.answer(), kNow) == InsertStatus::inserted);

  EntryCopy copy;
  for (std::uint32_t elapsed : {0u, 1u, 150u, 299u}) {
    INFO("elapsed " << elapsed);
    REQUIRE(c.lookup(key, kNow + elapsed, copy) == LookupStatus::hit);
    EntryReader r(copy.span());
    REQUIRE(r.valid());
    REQUIRE(r.expire() == kNow + 300);
    REQUIRE(remaining_ttl(r.ttl(), r.inserted(), kNow + elapsed) == 300 - elapsed);
  }
  for (std::uint32_t elapsed : {300u, 301u, 100000u}) {
    INFO("elapsed " << elapsed);
    REQUIRE(c.lookup(key, kNow + elapsed, copy) == LookupStatus::expired);
  }
  const CacheStats st = c.stats();
  REQUIRE(st.counter(Counter::hits) == 4);
  REQUIRE(st.counter(Counter::expired_on_lookup) == 3);
  REQUIRE(st.counter(Counter::misses) == 3);

  SECTION("re-inserting makes it live again with a fresh TTL") {
    REQUIRE(c.insert(key, a.answer(), kNow + 1000) == InsertStatus::replaced);
    REQUIRE(c.lookup(key, kNow + 1299, copy) == LookupStatus::hit);
    REQUIRE(c.lookup(key, kNow + 1300, copy) == LookupStatus::expired);
  }
  check_invariants(c);
}

TEST_CASE("expiry follows the entry TTL: the smallest record TTL when none is given", "[ttl]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  OwnedAnswer a;  // ttl 0: the entry lives as long as its shortest record
  a.add(kAnswer, {}, kCNAME, 3600, wire_name("target.example"));
  a.add(kAnswer, wire_name("target.example"), kA, 20, bytes_of({10, 0, 0, 1}));
  const CacheKey key(wire_name("short.example"), kA);
  REQUIRE(c.insert(key, a.answer(), kNow) == InsertStatus::inserted);
  EntryCopy copy;
  REQUIRE(c.lookup(key, kNow + 19, copy) == LookupStatus::hit);
  REQUIRE(c.lookup(key, kNow + 20, copy) == LookupStatus::expired);

  SECTION("a negative answer expires with its SOA TTL") {
    OwnedAnswer nx;
    nx.rcode = 3;
    nx.add(kAuthority, wire_name("example"), kSOA, 30, soa_rdata("ns.example", "h.example", 1, 30));
    const CacheKey nk(wire_name("nx.example"), kA);
    REQUIRE(c.insert(nk, nx.answer(), kNow) == InsertStatus::inserted);
    REQUIRE(c.lookup(nk, kNow + 29, copy) == LookupStatus::hit);
    REQUIRE(EntryReader(copy.span()).rcode() == 3);
    REQUIRE(c.lookup(nk, kNow + 30, copy) == LookupStatus::expired);
  }
}

TEST_CASE("batched lookups apply the same expiry rule", "[ttl]") {
  TestSegment ts(tiny_geometry(100, 4096, 4));
  Cache c(ts.seg);
  std::vector<CacheKey> keys;
  for (std::uint32_t i = 0; i < 20; ++i) {
    keys.emplace_back(wire_name("b" + std::to_string(i) + ".example"), kA);
    OwnedAnswer a;
    a.ttl = 10 + i;  // entry i expires at kNow + 10 + i
    a.add(kAnswer, {}, kA, a.ttl, bytes_of({10, 0, 0, int(i)}));
    REQUIRE(c.insert(keys.back(), a.answer(), kNow) == InsertStatus::inserted);
  }
  std::vector<const CacheKey*> ptrs;
  for (auto& k : keys) ptrs.push_back(&k);
  const std::uint32_t at = kNow + 20;  // entries 0..10 expired, 11..19 live
  int hits = 0, expired = 0;
  c.lookup_batch(ptrs.data(), ptrs.size(), at, [&](std::size_t i, LookupStatus st, const EntryCopy& copy) {
    if (i <= 10) {
      REQUIRE(st == LookupStatus::expired);
      ++expired;
    } else {
      REQUIRE(st == LookupStatus::hit);
      EntryReader r(copy.span());
      REQUIRE(remaining_ttl(r.ttl(), r.inserted(), at) == 10 + i - 20);
      ++hits;
    }
  });
  REQUIRE(hits == 9);
  REQUIRE(expired == 11);
}

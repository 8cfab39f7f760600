// SPDX-License-Identifier: GPL-3.0-or-later
// Reference model: random inserts, lookups, erases and clock steps applied to the Cache
// and to a std::unordered_map in lockstep, with the invariant walker after every batch,
// tiny capacities and deliberately bad hashes, so collisions, conflict evictions and
// region reclaims happen all the time.
//
// Model semantics: the cache may drop an entry at any time (eviction), but it must never
// return a value other than the latest one inserted for a key, never an erased one, and
// never an expired one as a hit. An entry just inserted is found by the next lookup.
#include <catch2/catch.hpp>
#include <cstring>
#include <unordered_map>

#include "cache/test_hooks.hpp"
#include "sim/workload/entry_generator.hpp"
#include "hash_choices.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

constexpr std::uint32_t kKeys = 200;

struct ModelValue {
  std::uint32_t version = 0;
  std::uint32_t inserted = 0;
  std::uint32_t ttl = 0;
  std::uint32_t expire() const { return inserted + ttl; }
};

CacheKey model_key(std::uint32_t k) { return CacheKey(wire_name("m" + std::to_string(k) + ".model.test"), kTXT); }

// The value of (k, version): one or two TXT records of a length that depends on both.
OwnedAnswer model_answer(std::uint32_t k, std::uint32_t version, std::uint32_t ttl) {
  sim::SplitMix64 r((std::uint64_t{k} << 32) | version);
  OwnedAnswer a;
  a.ttl = ttl;
  const std::string tag = "k=" + std::to_string(k) + " v=" + std::to_string(version) + " ";
  const unsigned records = 1 + static_cast<unsigned>(r.next() % 2);
  for (unsigned i = 0; i < records; ++i) {
    std::string text = tag;
    const std::size_t len = 1 + r.next() % 120;
    while (text.size() < len) text.push_back(static_cast<char>('a' + r.next() % 26));
    a.add(kAnswer, {}, kTXT, ttl, txt_rdata(text));
  }
  return a;
}

std::vector<std::uint8_t> encoded(std::uint32_t k, const ModelValue& v) {
  std::vector<std::uint8_t> out;
  encode_entry(model_key(k), model_answer(k, v.version, v.ttl).answer(), v.inserted, out);
  return out;
}

bool same_entry(const EntryCopy& copy, const std::vector<std::uint8_t>& want) {
  const std::size_t len = std::size_t{want[0]} | (std::size_t{want[1]} << 8);
  return copy.length == len && std::memcmp(copy.bytes.data(), want.data(), len) == 0;
}

void run_model(std::uint64_t seed, std::uint32_t regions, const HashChoice& hc, int batches, int ops_per_batch) {
  INFO("seed " << seed << ", " << regions << " regions, hash " << hc.name);
  TestSegment ts(tiny_geometry(50, 1024, regions), "model");
  Cache c(ts.seg);
  if (hc.hash) CacheTestHooks::set_hash_override(c, hc.hash);
  std::unordered_map<std::uint32_t, ModelValue> model;
  sim::SplitMix64 rng(seed);
  std::uint32_t now = 1'000'000;
  std::uint32_t version = 0;
  EntryCopy copy;
  std::uint64_t hits = 0, inserts = 0, erases = 0;
  for (int batch = 0; batch < batches; ++batch) {
    for (int op = 0; op < ops_per_batch; ++op) {
      const std::uint32_t k = static_cast<std::uint32_t>(rng.next() % kKeys);
      const unsigned what = static_cast<unsigned>(rng.next() % 100);
      INFO("batch " << batch << " op " << op << " key " << k << " now " << now);
      if (what < 45) {
        ModelValue v{++version, now, static_cast<std::uint32_t>(5 + rng.next() % 60)};
        const OwnedAnswer a = model_answer(k, v.version, v.ttl);
        const InsertStatus st = c.insert(model_key(k), a.answer(), now);
        REQUIRE(st != InsertStatus::rejected);
        model[k] = v;
        ++inserts;
        // The entry just inserted is there, exactly.
        REQUIRE(c.lookup(model_key(k), now, copy) == LookupStatus::hit);
        REQUIRE(same_entry(copy, encoded(k, v)));
      } else if (what < 88) {
        const LookupStatus st = c.lookup(model_key(k), now, copy);
        const auto it = model.find(k);
        if (st == LookupStatus::hit) {
          REQUIRE(it != model.end());          // never an erased or never-inserted key
          REQUIRE(now < it->second.expire());  // never an expired entry as a hit
          REQUIRE(same_entry(copy, encoded(k, it->second)));  // only the latest version
          ++hits;
        } else if (st == LookupStatus::expired) {
          REQUIRE(it != model.end());
          REQUIRE(now >= it->second.expire());
          REQUIRE(same_entry(copy, encoded(k, it->second)));
        }
      } else if (what < 96) {
        const bool erased = c.erase(model_key(k));
        if (erased) REQUIRE(model.count(k) == 1);  // the cache cannot hold what was never inserted
        model.erase(k);
        ++erases;
        REQUIRE(c.lookup(model_key(k), now, copy) == LookupStatus::miss);
      } else {
        now += static_cast<std::uint32_t>(rng.next() % 30);
      }
      REQUIRE(c.stats().live_entries <= 50);
    }
    check_invariants(c);
  }
  // The run must have exercised what it is about.
  const CacheStats st = c.stats();
  INFO("hits " << hits << " inserts " << inserts << " erases " << erases << " evictions "
               << st.counter(Counter::evictions) << " conflict evictions " << st.counter(Counter::conflict_evictions)
               << " expirations " << st.counter(Counter::expirations) << " second chances "
               << st.counter(Counter::second_chances));
  REQUIRE(hits > 0);
  REQUIRE(st.counter(Counter::evictions) + st.counter(Counter::conflict_evictions) > 0);
  REQUIRE(st.counter(Counter::expirations) + st.counter(Counter::expired_on_lookup) > 0);
}

}  // namespace

TEST_CASE("reference model: random operations agree with std::unordered_map", "[model]") {
  const std::uint32_t regions = GENERATE(3u, 4u, 6u);
  const int hash_index = GENERATE(0, 1, 2);
  for (std::uint64_t seed : {1ull, 2ull, 3ull}) run_model(seed * 7919 + regions, regions, kHashChoices[hash_index], 40, 250);
}

TEST_CASE("the bad hashes really are bad", "[model]") {
  const Geometry g = tiny_geometry(50, 1024, 4);
  const SegmentLayout l = SegmentLayout::compute(g);
  for (std::uint32_t k = 0; k < 50; ++k) {
    const IndexPosition p = index_position(two_buckets_hash(model_key(k)), l.bucket_count);
    REQUIRE(p.bucket1 == 0);
    REQUIRE(p.bucket2 == l.bucket_count - 1);
    const IndexPosition q = index_position(one_value_hash(model_key(k)), l.bucket_count);
    REQUIRE(q.bucket1 == 0);
    REQUIRE(q.bucket2 == 0);
  }
}

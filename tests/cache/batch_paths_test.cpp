// SPDX-License-Identifier: GPL-3.0-or-later
// The batch paths against the single ones, reference-model style: lookup_responses()
// must give what lookup_response() gives key by key (status, response bytes, counters),
// and insert_batch() must leave the cache exactly as the same inserts one by one
// (statuses, counters, what every key then looks up to). Run under the real hash and
// deliberately bad ones, with tiny capacities so that eviction and reclaim run constantly.
#include <catch2/catch.hpp>
#include <cstring>
#include <deque>

#include "cache/test_hooks.hpp"
#include "sim/workload/entry_generator.hpp"
#include "hash_choices.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {


// The seed's mix (A, AAAA, TXT, CNAME chains, NXDOMAIN/NODATA with SOA), numbered entries.
struct Population {
  explicit Population(std::uint64_t seed) : gen(mix(), seed) {}
  static sim::TrafficProfile mix() { return sim::benchmark_mix(); }
  const sim::GeneratedEntry& entry(std::uint64_t i) {
    while (entries.size() <= i) entries.push_back(gen.generate(entries.size()));
    while (keys.size() <= i) keys.push_back(entries[keys.size()].key());
    return entries[i];
  }
  const CacheKey& key(std::uint64_t i) {
    entry(i);
    return keys[i];
  }
  sim::EntryGenerator gen;
  std::deque<sim::GeneratedEntry> entries;
  std::deque<CacheKey> keys;
};

void insert_all(Cache& c, Population& pop, std::uint64_t n, std::uint32_t now) {
  std::vector<RecordData> recs;
  for (std::uint64_t i = 0; i < n; ++i) {
    const sim::GeneratedEntry& e = pop.entry(i);
    c.insert(pop.key(i), e.answer(recs), now + static_cast<std::uint32_t>(i % 7));
  }
}

std::array<std::uint64_t, 4> lookup_counters(const Cache& c) {
  const CacheStats s = c.stats();
  return {s.counter(Counter::lookups), s.counter(Counter::hits), s.counter(Counter::misses),
          s.counter(Counter::expired_on_lookup)};
}

void compare_lookups(std::uint64_t seed, std::uint32_t regions, const HashChoice& hc) {
  INFO("seed " << seed << ", " << regions << " regions, hash " << hc.name);
  TestSegment ts(tiny_geometry(40, 4096, regions), "batchlookup");
  Cache c(ts.seg);
  if (hc.hash) CacheTestHooks::set_hash_override(c, hc.hash);
  Population pop(seed);
  const std::uint32_t t0 = 1'000'000;
  insert_all(c, pop, 120, t0);  // three times the capacity: most keys were evicted
  sim::SplitMix64 rng(seed);
  std::uint64_t hits = 0;
  for (int round = 0; round < 40; ++round) {
    const std::size_t n = 1 + rng.next() % 100;  // batches below and above kMaxBatch
    const std::uint32_t now = t0 + static_cast<std::uint32_t>(rng.next() % 400);  // some expired
    std::vector<QueryInfo> queries(n);
    std::vector<ResponseOptions> options(n);
    std::vector<std::vector<std::uint8_t>> single(n), batched(n);
    std::vector<ResponseLookup> batch(n);
    std::vector<LookupStatus> single_status(n);
    std::vector<ResponseResult> single_result(n);
    std::vector<Bytes> qnames(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t k = rng.next() % 130;  // a few never inserted
      const sim::GeneratedEntry& e = pop.entry(k);
      qnames[i] = e.qname;
      if (rng.next() % 2) qnames[i][1] = static_cast<std::uint8_t>(std::toupper(qnames[i][1]));  // 0x20 case
      queries[i].id = static_cast<std::uint16_t>(rng.next());
      queries[i].flags = static_cast<std::uint16_t>(kFlagRd | (rng.next() % 2 ? kFlagAd : 0));
      queries[i].qname = qnames[i];
      queries[i].qtype = e.qtype;
      std::size_t capacity;
      options[i] = varied_response_options(rng.next(), &capacity);
      single[i].assign(capacity, 0xAA);
      batched[i].assign(capacity, 0x55);
      batch[i] = {&pop.key(k), &queries[i], &options[i], batched[i].data(), capacity};
    }
    const auto before = lookup_counters(c);
    for (std::size_t i = 0; i < n; ++i)
      single_result[i] = c.lookup_response(*batch[i].key, queries[i], now, options[i], single[i].data(),
                                           single[i].size(), &single_status[i]);
    const auto middle = lookup_counters(c);
    c.lookup_responses(batch, now);
    const auto after = lookup_counters(c);
    for (std::size_t j = 0; j < 4; ++j) REQUIRE(after[j] - middle[j] == middle[j] - before[j]);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("round " << round << " item " << i);
      REQUIRE(batch[i].status == single_status[i]);
      REQUIRE(batch[i].response.size == single_result[i].size);
      REQUIRE(batch[i].response.truncated == single_result[i].truncated);
      REQUIRE(std::memcmp(batched[i].data(), single[i].data(), single_result[i].size) == 0);
      hits += single_status[i] == LookupStatus::hit;
    }
  }
  REQUIRE(hits > 0);
  check_invariants(c);
}

}  // namespace

TEST_CASE("lookup_responses: the same statuses, bytes and counters as lookup_response", "[batch]") {
  const std::uint32_t regions = GENERATE(3u, 8u);
  const int hash_index = GENERATE(0, 1, 2);
  for (std::uint64_t seed : {1ull, 2ull, 3ull}) compare_lookups(seed * 31 + regions, regions, kHashChoices[hash_index]);
}

TEST_CASE("insert_batch: the same cache as the inserts one by one", "[batch]") {
  const std::uint32_t regions = GENERATE(3u, 5u);
  const int hash_index = GENERATE(0, 1, 2);
  const HashChoice& hc = kHashChoices[hash_index];
  INFO(regions << " regions, hash " << hc.name);
  const Geometry g = tiny_geometry(30, 2048, regions);
  TestSegment one_ts(g, "single"), batch_ts(g, "batched");
  Cache one(one_ts.seg), batched(batch_ts.seg);
  if (hc.hash) {
    CacheTestHooks::set_hash_override(one, hc.hash);
    CacheTestHooks::set_hash_override(batched, hc.hash);
  }
  Population pop(77 + regions);
  sim::SplitMix64 rng(regions);
  std::uint32_t now = 2'000'000;
  std::vector<RecordData> recs;
  EntryCopy a, b;
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 1 + rng.next() % 90;  // below and above kMaxBatch
    std::vector<std::uint64_t> which(n);
    std::deque<std::vector<RecordData>> batch_recs(n);
    std::vector<Answer> answers(n);
    std::vector<InsertItem> items(n);
    for (std::size_t i = 0; i < n; ++i) {
      which[i] = rng.next() % 150;  // repeats inside a batch: later ones replace
      answers[i] = pop.entry(which[i]).answer(batch_recs[i]);
      items[i] = {&pop.key(which[i]), &answers[i]};
    }
    std::vector<InsertStatus> single_status(n);
    for (std::size_t i = 0; i < n; ++i) single_status[i] = one.insert(pop.key(which[i]), answers[i], now);
    batched.insert_batch(items, now);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(items[i].status == single_status[i]);
    const CacheStats s1 = one.stats(), s2 = batched.stats();
    REQUIRE(s1.live_entries == s2.live_entries);
    REQUIRE(s1.bytes_in_use == s2.bytes_in_use);
    for (std::size_t c = 0; c < kCounterCount; ++c) REQUIRE(s1.counters[c] == s2.counters[c]);
    for (std::uint64_t k = 0; k < 150; ++k) {
      INFO("round " << round << " key " << k);
      const LookupStatus st1 = one.lookup(pop.key(k), now, a);
      const LookupStatus st2 = batched.lookup(pop.key(k), now, b);
      REQUIRE(st1 == st2);
      if (st1 != LookupStatus::miss) REQUIRE(std::memcmp(a.bytes.data(), b.bytes.data(), a.length) == 0);
    }
    check_invariants(one);
    check_invariants(batched);
    now += static_cast<std::uint32_t>(rng.next() % 40);  // entries expire too
  }
  const CacheStats st = batched.stats();
  REQUIRE(st.counter(Counter::evictions) + st.counter(Counter::conflict_evictions) > 0);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The fused read (Cache::read_slot_response, slot_read.hpp): both lookups write a hit's
// response straight from the entry in the arena, then re-check the region's generation.
//   1. Its bytes are write_response()'s (the general writer, on lookup()'s private copy)
//      on the seed mix, with varied query flags, options and buffer sizes.
//   2. A region recycled between the walk and the re-check (the test hook runs there)
//      never yields the walked response: the lookup answers a miss or the entry's true
//      bytes, never what the walk left in the buffer.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <vector>

#include "cache/test_hooks.hpp"
#include "sim/workload/entry_generator.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {

constexpr std::uint32_t kReadNow = 1'000'000;

void count_walks(void* arg) { ++*static_cast<std::uint64_t*>(arg); }

// The general writer's response for `key` from lookup()'s copy (size 0 on a miss).
std::vector<std::uint8_t> general_response(Cache& c, const CacheKey& key, const QueryInfo& q, std::uint32_t now,
                                           const ResponseOptions& o, std::size_t capacity) {
  static EntryCopy copy;
  std::vector<std::uint8_t> out(capacity, 0);
  if (c.lookup(key, now, copy) != LookupStatus::hit) return {};
  EntryReader reader(copy.span(), key.blob().size());
  REQUIRE(reader.valid());
  out.resize(write_response(reader, q, now, o, out.data(), capacity).size);
  return out;
}

}  // namespace

TEST_CASE("fused read: lookup_response and lookup_responses give write_response()'s bytes on the seed mix",
          "[fused]") {
  TestSegment ts(tiny_geometry(4000, 1 << 16, 16), "lookupfast-bytes");
  Cache c(ts.seg);
  std::uint64_t walks = 0;
  CacheTestHooks::set_after_arena_walk(c, count_walks, &walks);
  sim::EntryGenerator gen(sim::benchmark_mix(), 5);
  std::vector<sim::GeneratedEntry> entries;
  std::vector<CacheKey> keys;
  std::vector<RecordData> recs;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    entries.push_back(gen.generate(i));
    keys.push_back(entries.back().key());
    REQUIRE(c.insert(keys.back(), entries.back().answer(recs), kReadNow) != InsertStatus::rejected);
  }
  sim::SplitMix64 rng(9);
  std::uint64_t compared = 0;
  for (std::size_t first = 0; first < entries.size(); first += 50) {
    std::vector<QueryInfo> queries(50);
    std::vector<ResponseOptions> options(50);
    std::vector<Bytes> qnames(50), edns(50);
    std::vector<std::vector<std::uint8_t>> batched(50);
    std::vector<ResponseLookup> batch(50);
    for (std::size_t j = 0; j < 50; ++j) {
      const sim::GeneratedEntry& e = entries[first + j];
      qnames[j] = e.qname;
      if (rng.next() % 2) qnames[j][1] = static_cast<std::uint8_t>(std::toupper(qnames[j][1]));  // 0x20 case
      queries[j].id = static_cast<std::uint16_t>(rng.next());
      queries[j].flags = static_cast<std::uint16_t>(kFlagRd | (rng.next() % 2 ? kFlagAd : 0) | (rng.next() % 2 ? kFlagCd : 0));
      queries[j].qname = qnames[j];
      queries[j].qtype = e.qtype;
      std::size_t capacity;
      options[j] = varied_response_options(rng.next(), &capacity, &edns[j]);
      batched[j].assign(capacity, 0x55);
      batch[j] = {&keys[first + j], &queries[j], &options[j], batched[j].data(), capacity};
    }
    const std::uint32_t now = kReadNow + static_cast<std::uint32_t>(rng.next() % 3000);  // TTLs count down
    c.lookup_responses(batch, now);
    for (std::size_t j = 0; j < 50; ++j) {
      INFO("entry " << first + j);
      const std::vector<std::uint8_t> want =
          general_response(c, keys[first + j], queries[j], now, options[j], batched[j].size());
      std::vector<std::uint8_t> single(batched[j].size(), 0xAA);
      LookupStatus st;
      const ResponseResult r = c.lookup_response(keys[first + j], queries[j], now, options[j], single.data(),
                                                 single.size(), &st);
      REQUIRE(batch[j].status == st);
      REQUIRE(r.size == want.size());
      REQUIRE(batch[j].response.size == want.size());
      // std::equal, not memcmp: `want` is empty on a miss, and memcmp(p, nullptr, 0) is UB.
      REQUIRE(std::equal(want.begin(), want.end(), single.begin()));
      REQUIRE(std::equal(want.begin(), want.end(), batched[j].begin()));
      compared += !want.empty();
    }
  }
  REQUIRE(compared > entries.size() / 2);
  REQUIRE(walks > compared);  // the fused path ran (twice per entry it handles: batch and single)
  check_invariants(c);
}

namespace {

// The hook's work: on its first call, recycle every region of the segment (inserts
// through a second Cache until each region's generation has moved), and scribble over
// the response the walk just wrote, as a walk over torn bytes would have.
struct Recycler {
  Segment* seg = nullptr;
  Cache* writer = nullptr;
  std::uint8_t* out = nullptr;
  std::size_t out_bytes = 0;
  sim::EntryGenerator* gen = nullptr;
  std::uint64_t next_entry = 0;
  int calls = 0;
  bool recycled = false;
};

void recycle_under_reader(void* arg) {
  auto& r = *static_cast<Recycler*>(arg);
  if (r.calls++ != 0) return;
  const std::uint32_t n = r.seg->layout().region_count;
  std::vector<std::uint64_t> before(n);
  for (std::uint32_t i = 0; i < n; ++i) before[i] = r.seg->regions()[i].generation.load();
  std::vector<RecordData> recs;
  for (int tries = 0; tries < 20000 && !r.recycled; ++tries) {
    const sim::GeneratedEntry e = r.gen->generate(r.next_entry++);
    r.writer->insert(e.key(), e.answer(recs), kReadNow);
    r.recycled = true;
    for (std::uint32_t i = 0; i < n; ++i) r.recycled = r.recycled && r.seg->regions()[i].generation.load() != before[i];
  }
  std::memset(r.out, 0xEE, r.out_bytes);
}

}  // namespace

TEST_CASE("fused read: a region recycled between the walk and the re-check is never answered", "[fused][seqlock]") {
  const bool batched = GENERATE(false, true);
  INFO((batched ? "lookup_responses" : "lookup_response"));
  TestSegment ts(tiny_geometry(64, 4096, 4), "lookupfast-torn");
  Cache reader(ts.seg), writer(ts.seg);
  sim::EntryGenerator gen(sim::benchmark_mix(), 3);
  std::vector<RecordData> recs;
  // An A entry, the fused path's commonest case.
  std::uint64_t index = 0;
  sim::GeneratedEntry target = gen.generate(index);
  while (target.qtype != kA) target = gen.generate(++index);
  const CacheKey key = target.key();
  REQUIRE(writer.insert(key, target.answer(recs), kReadNow) != InsertStatus::rejected);
  QueryInfo q;
  q.id = 0x4242;
  q.flags = kFlagRd;
  q.qname = target.qname;
  q.qtype = target.qtype;
  const ResponseOptions o;
  std::vector<std::uint8_t> out(512, 0);
  sim::EntryGenerator filler(sim::benchmark_mix(), 4);
  Recycler r{&ts.seg, &writer, out.data(), out.size(), &filler, 1'000'000};
  CacheTestHooks::set_after_arena_walk(reader, recycle_under_reader, &r);
  ResponseResult got;
  LookupStatus st;
  if (batched) {
    ResponseLookup one{&key, &q, &o, out.data(), out.size()};
    reader.lookup_responses({&one, 1}, kReadNow);
    got = one.response;
    st = one.status;
  } else {
    got = reader.lookup_response(key, q, kReadNow, o, out.data(), out.size(), &st);
  }
  REQUIRE(r.calls >= 1);
  REQUIRE(r.recycled);
  // What the cache now says about the key, through the copying path and the general writer.
  CacheTestHooks::set_after_arena_walk(reader, nullptr, nullptr);
  const std::vector<std::uint8_t> want = general_response(reader, key, q, kReadNow, o, out.size());
  if (st == LookupStatus::hit) {
    REQUIRE(got.size == want.size());
    REQUIRE(std::memcmp(out.data(), want.data(), want.size()) == 0);
  } else {
    REQUIRE(st == LookupStatus::miss);
    REQUIRE(got.size == 0);
  }
  REQUIRE(std::count(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(got.size), 0xEE) < 4);
  check_invariants(writer);
}

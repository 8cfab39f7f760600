// SPDX-License-Identifier: GPL-3.0-or-later
// The invariant walker (cache/segment_check.hpp) on damaged segments: each section breaks
// one invariant of a small sound segment by writing its bytes directly, and the walker
// must name that damage (the message every operator of `dnsarena check` reads).
#include <catch2/catch.hpp>

#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

constexpr std::uint32_t kEntries = 20;

CacheKey check_key(std::uint32_t i) { return CacheKey(wire_name("c" + std::to_string(i) + ".check.test"), kA); }

// check_key(0) .. check_key(kEntries - 1), one A record each.
void insert_entries(Cache& c) {
  for (std::uint32_t i = 0; i < kEntries; ++i) {
    OwnedAnswer a;
    a.add(kAnswer, {}, kA, 3600, bytes_of({10, 0, 0, int(i)}));
    REQUIRE(c.insert(check_key(i), a.answer(), kNow) == InsertStatus::inserted);
  }
}

// The index slot that links check_key(i), found through the key's own buckets and tag.
std::atomic<std::uint64_t>& slot_of(const Segment& seg, std::uint32_t i) {
  const IndexPosition pos = index_position(check_key(i).hash(), seg.layout().bucket_count);
  for (std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& s : seg.buckets()[b].slots) {
      const std::uint64_t v = s.load();
      if (v != 0 && slot_hash_tag(v) == pos.hash_tag) return s;
    }
  FAIL("no slot links key " << i);
  throw;  // not reached: FAIL throws
}

// An empty slot of bucket `b`, or nullptr.
std::atomic<std::uint64_t>* empty_slot(const Segment& seg, std::uint64_t b) {
  for (auto& s : seg.buckets()[b].slots)
    if (s.load() == 0) return &s;
  return nullptr;
}

// The first region the ring counts as free.
std::uint32_t a_free_region(const Segment& seg) {
  const std::uint64_t hf = seg.header().head_and_free.load();
  REQUIRE(free_of(hf) > 0);
  return (head_of(hf) + 1) % seg.layout().region_count;
}

// The problems the walker lists, one a line.
std::string problems_of(const CheckReport& r) {
  std::string all;
  for (const auto& p : r.problems) all += p + "\n";
  return all;
}

}  // namespace

TEST_CASE("the invariant walker names each kind of damage", "[segment_check]") {
  TestSegment ts(tiny_geometry(100, 1024, 8));
  Cache c(ts.seg);
  insert_entries(c);
  check_invariants(c);
  const Segment& seg = ts.seg;
  SegmentHeader& h = seg.header();
  const SegmentLayout& l = seg.layout();
  const std::uint32_t used = head_of(h.head_and_free.load());  // the head region holds entries
  REQUIRE(seg.regions()[used].fill.load() > 0);
  std::vector<std::string> expected;  // fragments, each in some problem
  bool nothing_else = false;          // the walk stops at this damage: exactly `expected`

  SECTION("a head region out of range stops the walk") {
    h.head_and_free = pack_head_free(l.region_count, free_of(h.head_and_free.load()));
    expected = {"head region " + std::to_string(l.region_count) + " out of range"};
    nothing_else = true;
  }
  SECTION("a free count as large as the ring") {
    h.head_and_free = pack_head_free(used, l.region_count);
    expected = {"free region count " + std::to_string(l.region_count) + " >= region count"};
    nothing_else = true;
  }
  SECTION("a reclaim left unfinished") {
    h.reclaiming_region = 3;
    expected = {"reclaim of region 3 left unfinished"};
  }
  SECTION("a region fill that is not aligned") {
    seg.regions()[used].fill += 4;
    expected = {"region " + std::to_string(used) + ": fill ", "is not an aligned size within the region",
                "bytes_in_use is "};
  }
  SECTION("a free region that holds bytes") {
    const std::uint32_t r = a_free_region(seg);
    seg.regions()[r].fill = 8;
    expected = {"region " + std::to_string(r) + " is free but holds 8 bytes"};
  }
  SECTION("a malformed entry") {
    std::uint8_t* first = seg.arena() + std::uint64_t{used} * l.region_bytes;
    first[0] = first[1] = 0xFF;  // the entry's length
    expected = {"region " + std::to_string(used) + ": malformed entry at byte 0"};
  }
  SECTION("bytes_in_use against the regions' fills") {
    h.bytes_in_use += 8;
    expected = {"bytes_in_use is " + std::to_string(h.bytes_in_use.load()) + ", regions hold " +
                std::to_string(h.bytes_in_use.load() - 8)};
  }
  SECTION("a slot whose offset is outside the arena") {
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    const std::uint64_t v = s.load();
    s = make_slot(ArenaOffset::from_byte_offset(l.arena_bytes()), slot_gen_tag(v), slot_hash_tag(v));
    expected = {": offset outside the arena"};
  }
  SECTION("a slot into a free region") {
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    const std::uint64_t v = s.load();
    const std::uint32_t r = a_free_region(seg);
    s = make_slot(ArenaOffset::from_byte_offset(std::uint64_t{r} * l.region_bytes), slot_gen_tag(v), slot_hash_tag(v));
    expected = {": points into free region " + std::to_string(r)};
  }
  SECTION("a slot into the middle of an entry") {
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    const std::uint64_t v = s.load();
    s = make_slot(ArenaOffset::from_byte_offset(slot_offset(v).byte_offset() + kEntryAlignment), slot_gen_tag(v),
                  slot_hash_tag(v));
    expected = {": does not point at an entry start"};
  }
  SECTION("a slot with another generation tag") {
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    const std::uint64_t v = s.load();
    s = make_slot(slot_offset(v), slot_gen_tag(v) + 1, slot_hash_tag(v));
    expected = {": generation tag differs from region "};
  }
  SECTION("a slot with another hash tag") {
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    s = s.load() ^ 1;
    expected = {": hash tag differs from the entry's key"};
  }
  SECTION("a slot in a bucket the key does not hash to") {
    const IndexPosition pos = index_position(check_key(0).hash(), l.bucket_count);
    std::atomic<std::uint64_t>* other = nullptr;
    for (std::uint64_t b = 0; b < l.bucket_count && other == nullptr; ++b)
      if (b != pos.bucket1 && b != pos.bucket2) other = empty_slot(seg, b);
    REQUIRE(other != nullptr);
    std::atomic<std::uint64_t>& s = slot_of(seg, 0);
    *other = s.load();
    s = 0;
    expected = {": entry's key hashes to other buckets"};
  }
  SECTION("two slots for one key") {
    const IndexPosition pos = index_position(check_key(0).hash(), l.bucket_count);
    std::atomic<std::uint64_t>* twin = empty_slot(seg, pos.bucket1);
    if (twin == nullptr) twin = empty_slot(seg, pos.bucket2);
    REQUIRE(twin != nullptr);
    *twin = slot_of(seg, 0).load();
    expected = {": another slot holds the same key",
                "live_entries is " + std::to_string(kEntries) + ", index links " + std::to_string(kEntries + 1)};
  }
  SECTION("live_entries against the index") {
    h.live_entries += 1;
    expected = {"live_entries is " + std::to_string(kEntries + 1) + ", index links " + std::to_string(kEntries)};
  }

  const CheckReport r = check_segment(c);
  INFO("problems:\n" << problems_of(r));
  CHECK_FALSE(r.ok());
  CHECK(r.problem_count == r.problems.size());
  if (nothing_else) CHECK(r.problem_count == expected.size());
  for (const std::string& fragment : expected) {
    bool found = false;
    for (const auto& p : r.problems) found = found || p.find(fragment) != std::string::npos;
    INFO("expected a problem containing: " << fragment);
    CHECK(found);
  }
}

TEST_CASE("the invariant walker counts what it walked", "[segment_check]") {
  TestSegment ts(tiny_geometry(100, 1024, 8));
  Cache c(ts.seg);
  insert_entries(c);
  const CheckReport r = check_segment(c);
  REQUIRE(r.ok());
  CHECK(r.live_entries == kEntries);
  CHECK(r.entries_walked == kEntries);
  CHECK(r.bytes_in_use == ts.seg.header().bytes_in_use.load());
  CHECK(r.used_regions >= 1);
  CHECK_FALSE(r.repaired);
}

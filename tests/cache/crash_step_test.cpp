// SPDX-License-Identifier: GPL-3.0-or-later
// Crash points of the index writes (failpoint.hpp): a forked writer dies at a named step
// of a cuckoo displacement, and the next writer must leave a segment where every key is
// answered with its exact bytes or missed, an erased key is never served again, and
// `check` is clean. A second test damages the index the ways a dead writer (or an older
// build) could, and requires repair() to drop every stale or duplicate slot.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <string>

#include "cache/failpoint.hpp"
#include "cache/test_hooks.hpp"
#include "child_process.hpp"
#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

// A hash whose two buckets are b1 and b2 (index_position's range reduction inverted);
// `salt` varies the hash within the bucket without moving it.
std::uint64_t hash_to(std::uint64_t b1, std::uint64_t b2, std::uint64_t buckets, std::uint32_t salt) {
  auto lo_for = [&](std::uint64_t b) { return ((b << 32) + buckets - 1) / buckets + salt; };
  return (lo_for(b2) << 32) | lo_for(b1);
}

std::string blob_of(std::uint32_t k) {
  const CacheKey key = verifiable_key(k);
  const auto b = key.blob();
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// The slots of `seg` that link key k (scanning the whole index, not trusting its hash).
std::vector<std::atomic<std::uint64_t>*> slots_linking(const Segment& seg, std::uint32_t k) {
  std::vector<std::atomic<std::uint64_t>*> out;
  const std::string blob = blob_of(k);
  for (std::uint64_t b = 0; b < seg.layout().bucket_count; ++b)
    for (auto& slot : seg.buckets()[b].slots) {
      const std::uint64_t s = slot.load();
      if (s == 0) continue;
      const std::uint8_t* p = seg.arena() + slot_offset(s).byte_offset();
      if (std::memcmp(p + kEntryKeyOffset, blob.data(), blob.size()) == 0) out.push_back(&slot);
    }
  return out;
}

unsigned used_slots(const Segment& seg, std::uint64_t bucket) {
  unsigned n = 0;
  for (auto& slot : seg.buckets()[bucket].slots) n += slot.load() != 0;
  return n;
}

// Keys 0-7 own bucket 1 alone; keys 8-15 hash to buckets (0, 3) and split between them;
// keys 16-19 own bucket 0 alone, filling it. Key 20 hashes to (0, 1), both full: its
// insert must displace key 8 (bucket 0, slot 0) into bucket 3.
constexpr std::uint32_t kDisplaced = 8, kNewKey = 20, kStepKeys = 21;

HashOverride displacement_hashes(std::uint64_t buckets) {
  auto table = std::make_shared<std::map<std::string, std::uint64_t>>();
  for (std::uint32_t k = 0; k < kStepKeys; ++k) {
    const std::uint32_t salt = k * 7 + 1;
    const std::uint64_t h = k < 8 ? hash_to(1, 1, buckets, salt)
                            : k < 16 ? hash_to(0, 3, buckets, salt)
                            : k < 20 ? hash_to(0, 0, buckets, salt)
                                     : hash_to(0, 1, buckets, salt);
    (*table)[blob_of(k)] = h;
  }
  return [table](const CacheKey& key) {
    const auto b = key.blob();
    const auto it = table->find(std::string(reinterpret_cast<const char*>(b.data()), b.size()));
    return it == table->end() ? key.hash() : it->second;
  };
}

}  // namespace

TEST_CASE("a writer killed at each step of a cuckoo displacement leaves at worst a miss", "[multiprocess][crash]") {
  const FailStep step = GENERATE(FailStep::append_copied, FailStep::append_published, FailStep::displace_new_linked,
                                 FailStep::displace_done);
  INFO("writer killed at step " << kFailStepNames[static_cast<std::size_t>(step)]);
  TestSegment ts(tiny_geometry(64, 4096, 8), "cuckoo");  // 10 buckets
  const std::uint64_t buckets = ts.seg.layout().bucket_count;
  REQUIRE(buckets == 10);
  const std::uint32_t now = wall_clock_now();
  {
    Cache c(ts.seg);
    CacheTestHooks::set_hash_override(c, displacement_hashes(buckets));
    for (std::uint32_t k = 0; k < kNewKey; ++k)
      REQUIRE(c.insert_encoded(verifiable_key(k), encode_verifiable({k, 1, 1}, now), now) == InsertStatus::inserted);
  }
  REQUIRE(used_slots(ts.seg, 0) == 8);
  REQUIRE(used_slots(ts.seg, 1) == 8);
  REQUIRE(used_slots(ts.seg, 3) == 4);
  REQUIRE(slots_linking(ts.seg, kDisplaced).front() == &ts.seg.buckets()[0].slots[0]);

  const std::string name = ts.name();
  dnsarena::common::ChildProcess victim = spawn_child([&] {
    Segment seg = Segment::attach(name);
    Cache c(seg, SlotRole::worker, 1);
    CacheTestHooks::set_hash_override(c, displacement_hashes(buckets));
    set_failpoint([step](FailStep s, std::uint64_t) {
      if (s == step) ::raise(SIGKILL);
    });
    c.insert_encoded(verifiable_key(kNewKey), encode_verifiable({kNewKey, 1, 2}, now), now);
    return kChildNoProgress;  // never reached
  }, 30);
  REQUIRE(wait_child(victim, std::chrono::seconds(10)) == 128 + SIGKILL);
  INFO("slots linking the displaced key after the crash: " << slots_linking(ts.seg, kDisplaced).size());

  Cache c(ts.seg, SlotRole::tool);
  CacheTestHooks::set_hash_override(c, displacement_hashes(buckets));
  // Erase the resident the dead writer was moving: it must never be served again.
  c.erase(verifiable_key(kDisplaced));  // takes the lock: EOWNERDEAD, repair() first
  EntryCopy copy;
  CHECK(c.lookup(verifiable_key(kDisplaced), now, copy) != LookupStatus::hit);
  CHECK(slots_linking(ts.seg, kDisplaced).empty());
  check_invariants(c);
  // Every other key: exact bytes or a miss; those the dead writer did not touch: exact.
  std::uint64_t hits = 0;
  for (std::uint32_t k = 0; k < kStepKeys; ++k) {
    if (k == kDisplaced) continue;
    const LookupStatus st = c.lookup(verifiable_key(k), now, copy);
    if (st == LookupStatus::hit) {
      ++hits;
      const std::string wrong = verify_entry(copy.span(), k);
      INFO("key " << k << ": " << wrong);
      CHECK(wrong.empty());
    } else {
      INFO("key " << k << " lost");
      CHECK(k == kNewKey);
    }
  }
  CHECK(c.stats().live_entries == hits);
}

TEST_CASE("repair() drops duplicate slots, stale generation tags and slots into free or unwritten space",
          "[crash][repair]") {
  TestSegment ts(tiny_geometry(1000, 4096, 8), "repair");
  const Segment& seg = ts.seg;
  Cache c(ts.seg);
  const std::uint32_t now = wall_clock_now();
  for (std::uint32_t k = 0; k < 40; ++k)
    REQUIRE(c.insert_encoded(verifiable_key(k), encode_verifiable({k, 1, 1}, now), now) == InsertStatus::inserted);
  check_invariants(c);
  auto free_slot_in = [&](std::uint64_t b) -> std::atomic<std::uint64_t>* {
    for (auto& slot : seg.buckets()[b].slots)
      if (slot.load() == 0) return &slot;
    return nullptr;
  };
  const auto other_bucket = [&](std::uint32_t k, std::atomic<std::uint64_t>* slot) {
    const IndexPosition pos = index_position(verifiable_key(k).hash(), seg.layout().bucket_count);
    const auto* bucket = reinterpret_cast<const Bucket*>(reinterpret_cast<std::uintptr_t>(slot) & ~std::uintptr_t{63});
    return bucket == &seg.buckets()[pos.bucket1] ? pos.bucket2 : pos.bucket1;
  };
  // 1. A duplicate: key 3 linked from both of its buckets (a displacement cut in half).
  std::atomic<std::uint64_t>* k3 = slots_linking(seg, 3).front();
  std::atomic<std::uint64_t>* dup = free_slot_in(other_bucket(3, k3));
  REQUIRE(dup != nullptr);
  dup->store(k3->load());
  // 2. A stale generation tag: key 5's slot from an earlier generation of its region.
  std::atomic<std::uint64_t>* k5 = slots_linking(seg, 5).front();
  const std::uint64_t s5 = k5->load();
  k5->store(make_slot(slot_offset(s5), slot_gen_tag(s5) + 1, slot_hash_tag(s5)));
  // 3. A slot into a free region and 4. a slot beyond its region's fill (both reachable
  //    only through a writer that died between unlinking and freeing, or a torn store).
  const std::uint64_t hf = seg.header().head_and_free.load();
  const std::uint32_t free_region = (head_of(hf) + 1) % seg.layout().region_count;
  std::atomic<std::uint64_t>* k7 = slots_linking(seg, 7).front();
  std::atomic<std::uint64_t>* stray = free_slot_in(other_bucket(7, k7));
  REQUIRE(stray != nullptr);
  stray->store(make_slot(ArenaOffset::from_byte_offset(std::uint64_t{free_region} * 4096), 0, slot_hash_tag(k7->load())));
  const std::uint32_t head = head_of(hf);
  const std::uint32_t fill = seg.regions()[head].fill.load();
  std::atomic<std::uint64_t>* k9 = slots_linking(seg, 9).front();
  std::atomic<std::uint64_t>* beyond = free_slot_in(other_bucket(9, k9));
  REQUIRE(beyond != nullptr);
  beyond->store(make_slot(ArenaOffset::from_byte_offset(std::uint64_t{head} * 4096 + fill),
                          generation_tag(seg.regions()[head].generation.load()), slot_hash_tag(k9->load())));

  CacheTestHooks::repair_now(c);
  check_invariants(c);
  REQUIRE(slots_linking(seg, 3).size() == 1);
  REQUIRE(slots_linking(seg, 5).empty());  // a stale slot is dropped: a miss, never a wrong read
  // An erased key is gone, wherever its copies were.
  REQUIRE(c.erase(verifiable_key(3)));
  EntryCopy copy;
  REQUIRE(c.lookup(verifiable_key(3), now, copy) != LookupStatus::hit);
  for (std::uint32_t k = 0; k < 40; ++k) {
    if (k == 3 || k == 5) continue;
    INFO("key " << k);
    REQUIRE(c.lookup(verifiable_key(k), now, copy) == LookupStatus::hit);
    REQUIRE(verify_entry(copy.span(), k).empty());
  }
  REQUIRE(c.stats().live_entries == 38);
}

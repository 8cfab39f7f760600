// SPDX-License-Identifier: GPL-3.0-or-later
// The seqlock's two guards against a reader that stalled between loading a slot and
// loading its region's generation: the entry must lie below the region's published fill
// (an append of the current generation may be half-written above it), and the slot's
// generation tag must tell a recycled region apart for far more than 256 recycles.
#include <catch2/catch.hpp>
#include <cstring>

#include "test_segment.hpp"
#include "verifiable_value.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

std::atomic<std::uint64_t>* slot_of(const Segment& seg, const CacheKey& key) {
  const IndexPosition pos = index_position(key.hash(), seg.layout().bucket_count);
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& slot : seg.buckets()[b].slots) {
      const std::uint64_t s = slot.load();
      if (s == 0) continue;
      const std::uint8_t* p = seg.arena() + slot_offset(s).byte_offset();
      if (std::memcmp(p + kEntryKeyOffset, key.blob().data(), key.blob().size()) == 0) return &slot;
    }
  return nullptr;
}

}  // namespace

TEST_CASE("an entry above its region's published fill is never copied", "[seqlock]") {
  // What a stalled reader sees when its slot's region was recycled (tag matching again)
  // and is being refilled: the slot points at bytes the current generation has not
  // published yet. Emulated by lowering the fill under a linked entry.
  TestSegment ts(tiny_geometry(1000, 4096, 4));
  Cache c(ts.seg);
  const std::uint32_t now = wall_clock_now();
  for (std::uint32_t k = 0; k < 3; ++k)
    REQUIRE(c.insert_encoded(verifiable_key(k), encode_verifiable({k, 1, 1}, now), now) == InsertStatus::inserted);
  const std::uint64_t s = slot_of(ts.seg, verifiable_key(2))->load();
  const std::uint64_t byte_off = slot_offset(s).byte_offset();
  RegionDesc& region = ts.seg.regions()[byte_off / 4096];
  const std::uint32_t fill = region.fill.load();
  EntryCopy copy;
  REQUIRE(c.lookup(verifiable_key(2), now, copy) == LookupStatus::hit);
  region.fill.store(static_cast<std::uint32_t>(byte_off % 4096));  // key 2 is not published
  CHECK(c.lookup(verifiable_key(2), now, copy) != LookupStatus::hit);
  CHECK(c.lookup(verifiable_key(1), now, copy) == LookupStatus::hit);  // below the fill: fine
  region.fill.store(fill);
  CHECK(c.lookup(verifiable_key(2), now, copy) == LookupStatus::hit);
}

TEST_CASE("a slot stays stale after 256 recycles of its region", "[seqlock]") {
  // A slot published at generation g, read by a reader after the region was recycled 256
  // times (and the same key written at the same offset again): with an 8-bit tag it
  // matches and the reader copies a stale entry. Emulated by advancing the generation.
  TestSegment ts(tiny_geometry(1000, 4096, 4));
  Cache c(ts.seg);
  const std::uint32_t now = wall_clock_now();
  REQUIRE(c.insert_encoded(verifiable_key(1), encode_verifiable({1, 1, 1}, now), now) == InsertStatus::inserted);
  const std::uint64_t s = slot_of(ts.seg, verifiable_key(1))->load();
  RegionDesc& region = ts.seg.regions()[slot_offset(s).byte_offset() / 4096];
  EntryCopy copy;
  for (const std::uint64_t recycles : {256ull, 4096ull, 65535ull}) {
    INFO(recycles << " recycles");
    region.generation.fetch_add(recycles);
    CHECK(c.lookup(verifiable_key(1), now, copy) != LookupStatus::hit);
    region.generation.fetch_sub(recycles);
    CHECK(c.lookup(verifiable_key(1), now, copy) == LookupStatus::hit);
  }
  CHECK(generation_tag(7) != generation_tag(7 + 256));
  CHECK(generation_tag(7) != generation_tag(7 + 65535));
}

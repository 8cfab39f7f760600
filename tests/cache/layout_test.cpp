// SPDX-License-Identifier: GPL-3.0-or-later
// The documented binary layout, checked numerically at run time on real objects (the
// headers also static_assert some of it; this catches a diagram and a struct drifting
// apart in a field the static_asserts do not cover), and one SegmentLayout by hand.
#include <catch2/catch.hpp>
#include <cstddef>

#include "cache/arena_offset.hpp"
#include "cache/index_slot.hpp"
#include "cache/region_table.hpp"
#include "cache/segment_header.hpp"
#include "cache/stat_slots.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

template <typename T, typename F>
std::size_t offset_in(const T& object, const F& field) {
  return static_cast<std::size_t>(reinterpret_cast<const char*>(&field) - reinterpret_cast<const char*>(&object));
}

}  // namespace

TEST_CASE("SegmentHeader field offsets follow the diagram", "[layout]") {
  TestSegment ts(tiny_geometry(100, 1024, 3));
  const SegmentHeader& h = ts.seg.header();
  REQUIRE(reinterpret_cast<std::uintptr_t>(&h) % 4096 == 0);
  REQUIRE(sizeof(SegmentHeader) == 4096);
  REQUIRE(offset_in(h, h.magic) == 0);
  REQUIRE(offset_in(h, h.format_version) == 8);
  REQUIRE(offset_in(h, h.header_bytes) == 12);
  REQUIRE(offset_in(h, h.build_features) == 16);
  REQUIRE(offset_in(h, h.created_unix) == 24);
  REQUIRE(offset_in(h, h.max_entries) == 32);
  REQUIRE(offset_in(h, h.arena_bytes) == 40);
  REQUIRE(offset_in(h, h.region_bytes) == 48);
  REQUIRE(offset_in(h, h.region_count) == 52);
  REQUIRE(offset_in(h, h.bucket_count) == 56);
  REQUIRE(offset_in(h, h.stat_slots) == 64);
  REQUIRE(offset_in(h, h.reserved0) == 68);
  REQUIRE(offset_in(h, h.stats_offset) == 72);
  REQUIRE(offset_in(h, h.regions_offset) == 80);
  REQUIRE(offset_in(h, h.index_offset) == 88);
  REQUIRE(offset_in(h, h.arena_offset) == 96);
  REQUIRE(offset_in(h, h.total_bytes) == 104);
  REQUIRE(offset_in(h, h.identity_checksum) == 112);
  REQUIRE(offset_in(h, h.init_state) == 120);
  REQUIRE(offset_in(h, h.reserved1) == 124);
  REQUIRE(offset_in(h, h.writer_lock) == 128);
  REQUIRE(sizeof(h.writer_lock) == 40);
  REQUIRE(offset_in(h, h.head_and_free) == 192);
  REQUIRE(offset_in(h, h.reclaiming_region) == 200);
  REQUIRE(offset_in(h, h.live_entries) == 208);
  REQUIRE(offset_in(h, h.bytes_in_use) == 216);
  REQUIRE(offset_in(h, h.repairs) == 224);
  REQUIRE(offset_in(h, h.clock_high_water) == 232);
  REQUIRE(offset_in(h, h.reserved) == 240);
  REQUIRE(sizeof(h.reserved) == 4096 - 240);

  SECTION("the bytes are what the diagram says they are") {
    const auto* b = reinterpret_cast<const std::uint8_t*>(&h);
    REQUIRE(std::string(reinterpret_cast<const char*>(b), 8) == "DNSARENA");
    REQUIRE((b[8] | (b[9] << 8)) == static_cast<int>(kFormatVersion));
    REQUIRE((b[12] | (b[13] << 8)) == 4096);
    REQUIRE(identity_checksum(h) == h.identity_checksum);
    REQUIRE(h.init_state.load() == kInitReady);
    REQUIRE(h.reclaiming_region.load() == kNoRegion);
    REQUIRE(head_of(h.head_and_free.load()) == 0);
    REQUIRE(free_of(h.head_and_free.load()) == 2);
  }
}

TEST_CASE("StatSlot, RegionDesc, Bucket and ArenaOffset sizes and offsets", "[layout]") {
  TestSegment ts(tiny_geometry(100, 1024, 3));
  const StatSlot& s = ts.seg.stat_slots()[1];
  REQUIRE(sizeof(StatSlot) == 512);
  REQUIRE(alignof(StatSlot) == 64);
  REQUIRE(offset_in(s, s.owner_pid) == 0);
  REQUIRE(offset_in(s, s.role) == 4);
  REQUIRE(offset_in(s, s.claimed_unix) == 8);
  REQUIRE(offset_in(s, s.worker_index) == 16);
  REQUIRE(offset_in(s, s.counters[0]) == 24);
  REQUIRE(offset_in(s, s.counters[kCounterCount - 1]) == 24 + 8 * (kCounterCount - 1));
  REQUIRE(24 + 8 * kCounterCount <= 512);
  REQUIRE(24 + 8 * kMaxCounters == 512);
  REQUIRE(kCounterNames.size() == kCounterCount);
  // Counters are only appended: one that existed keeps its offset, the newest is last.
  REQUIRE(static_cast<std::size_t>(Counter::user_ns_queries) == 35);
  REQUIRE(static_cast<std::size_t>(Counter::policy_hits) == 48);
  REQUIRE(static_cast<std::size_t>(Counter::queries_doh) == 56);
  REQUIRE(static_cast<std::size_t>(Counter::authority_rate_limited) == kCounterCount - 1);
  REQUIRE(reinterpret_cast<std::uintptr_t>(&s) % 64 == 0);

  const RegionDesc& r = ts.seg.regions()[2];
  REQUIRE(sizeof(RegionDesc) == 16);
  REQUIRE(offset_in(r, r.generation) == 0);
  REQUIRE(offset_in(r, r.fill) == 8);
  REQUIRE(offset_in(r, r.reserved) == 12);

  REQUIRE(sizeof(Bucket) == 64);
  REQUIRE(reinterpret_cast<std::uintptr_t>(ts.seg.buckets()) % 64 == 0);
  REQUIRE(reinterpret_cast<std::uintptr_t>(ts.seg.arena()) % 4096 == 0);
  REQUIRE(sizeof(ArenaOffset) == 4);
  REQUIRE(ArenaOffset().is_null());
  REQUIRE(ArenaOffset::from_byte_offset(0).raw() == 1);
  REQUIRE(ArenaOffset::from_byte_offset(64).byte_offset() == 64);
  REQUIRE(kMaxArenaBytes == (std::uint64_t{0xFFFFFFFF} - 1) * 8);
}

TEST_CASE("index slot bits: | offset:32 | gen tag:16 | hit:1 | hash tag:15 |", "[layout]") {
  const std::uint64_t s = make_slot(ArenaOffset::from_raw(0xA1B2C3D4), 0x1BEE5, 0x7FFF);
  REQUIRE(s == 0xA1B2C3D4BEE57FFFULL);
  REQUIRE(slot_offset(s).raw() == 0xA1B2C3D4);
  REQUIRE(slot_gen_tag(s) == 0xBEE5);
  REQUIRE(slot_hash_tag(s) == 0x7FFF);
  REQUIRE_FALSE(slot_hit(s));
  REQUIRE(slot_hit(s | kSlotHitBit));
  REQUIRE(kSlotHitBit == 0x8000);
  REQUIRE(slot_hash_tag(s | kSlotHitBit) == 0x7FFF);
  REQUIRE(slot_gen_tag(s | kSlotHitBit) == 0xBEE5);
  REQUIRE(generation_tag(0x12345) == 0x2345);
  REQUIRE(make_slot(ArenaOffset::from_raw(1), 0, 0) != 0);  // a used slot is never "empty"
}

TEST_CASE("entry bytes follow the entry diagram", "[layout]") {
  OwnedAnswer a;
  a.ttl = 300;
  a.rcode = 3;
  a.authentic_data = true;
  a.add(kAuthority, wire_name("example"), kSOA, 200, soa_rdata("ns.example", "h.example", 1, 200));
  const CacheKey key(wire_name("www.example"), kA, kKeyDo);
  std::vector<std::uint8_t> e;
  const std::size_t len = encode_entry(key, a.answer(), 1000, e);
  REQUIRE(len > 0);
  REQUIRE((e[0] | (e[1] << 8)) == static_cast<int>(len));
  REQUIRE(e[2] == (3 | kInfoAuthenticData));  // rcode 3, AD, narrow counts
  REQUIRE(e[3] == 0);
  REQUIRE((e[4] | (e[5] << 8) | (e[6] << 16) | (std::uint32_t{e[7]} << 24)) == 1300);  // expire, LE
  REQUIRE((e[8] | (e[9] << 8) | (e[10] << 16) | (std::uint32_t{e[11]} << 24)) == 300);  // ttl, LE
  // Key blob at 12: qtype LE, flags, ECS prefix, qname length, qname.
  REQUIRE(e[12] == kA);
  REQUIRE(e[13] == 0);
  REQUIRE(e[14] == kKeyDo);
  REQUIRE(e[15] == 0);
  REQUIRE(e[16] == wire_name("www.example").size());
  const std::size_t counts = 12 + 5 + wire_name("www.example").size();
  REQUIRE(e[counts] == 0);
  REQUIRE(e[counts + 1] == 1);
  REQUIRE(e[counts + 2] == 0);
  // The SOA record: owner stored, type stored, class IN, TTL 200 stored, u8 rdlength.
  const std::uint8_t desc = e[counts + 3];
  REQUIRE(desc == (kDescClassIn | kDescRdlenU8));
}

TEST_CASE("SegmentLayout::compute, worked by hand", "[layout]") {
  Geometry g;
  g.max_entries = 1000;
  g.arena_bytes = 10000;
  g.region_bytes = 4096;
  g.stat_slots = 4;
  const SegmentLayout l = SegmentLayout::compute(g);
  // regions: ceil(10000 / 4096) = 3; buckets: ceil(1000 / 6.4) = ceil(156.25) = 157.
  REQUIRE(l.region_count == 3);
  REQUIRE(l.bucket_count == 157);
  REQUIRE(l.arena_bytes() == 3 * 4096);
  // stats right after the 4096-byte header; 4 x 512 = 2048 -> regions at 6144 (a multiple
  // of 64); 3 x 16 = 48 -> 6192, aligned up to 6208 for the index; 157 x 64 = 10048 ->
  // 16256, aligned up to a page: the arena at 16384; total 16384 + 12288 = 28672.
  REQUIRE(l.stats_offset == 4096);
  REQUIRE(l.regions_offset == 6144);
  REQUIRE(l.index_offset == 6208);
  REQUIRE(l.arena_offset == 16384);
  REQUIRE(l.total_bytes == 28672);

  SECTION("a real segment of that geometry is that big and says so in its header") {
    TestSegment ts(g);
    REQUIRE(ts.seg.size() == 28672);
    const SegmentHeader& h = ts.seg.header();
    REQUIRE(h.bucket_count == 157);
    REQUIRE(h.index_offset == 6208);
    REQUIRE(h.arena_offset == 16384);
    REQUIRE(h.total_bytes == 28672);
    REQUIRE(ts.seg.geometry().arena_bytes == 3 * 4096);
  }
  SECTION("at least 3 regions, whatever the arena size") {
    Geometry small = g;
    small.arena_bytes = 1;
    REQUIRE(SegmentLayout::compute(small).region_count == 3);
  }
  SECTION("bad parameters are refused, naming the parameter") {
    Geometry bad = g;
    bad.region_bytes = 1000;
    REQUIRE_THROWS_WITH(SegmentLayout::compute(bad), Catch::Contains("region_bytes"));
    bad = g;
    bad.max_entries = 0;
    REQUIRE_THROWS_WITH(SegmentLayout::compute(bad), Catch::Contains("max_entries"));
    bad = g;
    bad.stat_slots = 0;
    REQUIRE_THROWS_WITH(SegmentLayout::compute(bad), Catch::Contains("stat_slots"));
  }
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The counting allocator's figures checked against one entry added up by hand.
//
// Entry: qname www.example.com (wire 3www7example3com0 = 17 bytes), type A, two A
// records, TTL 300, no ECS tag. Sizes are for x86-64 libstdc++.
#include <catch2/catch.hpp>

#include <unordered_map>
#include <vector>

#include "sim/layouts/counting_allocator.hpp"
#include "sim/layouts/layout.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena;
using namespace dnsarena::sim::layouts;

namespace {

constexpr std::uint32_t kNow = 1'767'225'600;

// The bucket array after the first insert, from the same libstdc++ rehash policy.
std::size_t buckets_after_one_insert() {
  std::unordered_map<int, int> probe;
  probe.emplace(1, 1);
  return probe.bucket_count();
}

LayoutMemory one_entry(Layout& layout) {
  const auto qname = wire::name_to_wire("www.example.com");
  REQUIRE(qname.size() == 17);
  const std::uint8_t a1[4] = {192, 0, 2, 1}, a2[4] = {192, 0, 2, 2};
  const cache::RecordData recs[2] = {{{}, 1, 1, 300, a1}, {{}, 1, 1, 300, a2}};
  cache::Answer answer;
  answer.ttl = 300;
  answer.sections[cache::kAnswer] = recs;
  REQUIRE(layout.insert({qname, 1, 0, {}, &answer}, kNow));
  return layout.memory();
}

double allocated(std::initializer_list<std::size_t> requests) {
  double total = 0;
  for (std::size_t r : requests) total += static_cast<double>(allocated_size(r));
  return total;
}

}  // namespace

TEST_CASE("v0 accounting of one A entry with two records, by hand", "[layouts][accounting]") {
  auto v0 = make_layout_v0();
  const LayoutMemory m = one_entry(*v0);
  const std::size_t bucket_bytes = buckets_after_one_insert() * 8;
  // map node: next pointer 8 + key 64 (string 32, type/flags 8, tag vector 24)
  //           + entry 192 (created 8, inception 8, ttl 4 + pad 4, hits 8, three record
  //           vectors 72, extended errors 24, ECS reply 24, zone string 32, rcode and
  //           three bools 4, padded to 8) = 264
  // key name: 17 bytes > 15 inline, so heap: 17 + NUL = 18 (the empty tag: nothing)
  // answer vector after two push_backs: capacity 2 x record 184 = 368 (the first
  //           one-record block was freed when it grew)
  // two owner strings, each a copy of the qname: 2 x 18
  // rdata: A inline in the variant, no heap
  const double expect_net = 264 + 18 + 368 + 2 * 18 + static_cast<double>(bucket_bytes);
  CHECK(m.entries == 1);
  CHECK(m.net_bytes == expect_net);
  CHECK(m.allocs == 6);  // node, name, record block, 2 owners, buckets
  CHECK(m.alloc_bytes == allocated({264, 18, 368, 18, 18, bucket_bytes}));
}

TEST_CASE("v5 accounting of the same entry, by hand", "[layouts][accounting]") {
  auto v5 = make_layout_v5();
  const LayoutMemory m = one_entry(*v5);
  const std::size_t bucket_bytes = buckets_after_one_insert() * 8;
  // map node: next 8 + key 40 (name 16, type/flags 8, tag 16) + entry 120 (created,
  //           inception, hits 24; records, rdata, extended errors, ECS reply, zone: five
  //           boxed slices 80; ttl 4, two u16 offsets 4, flags 1, padded) = 168
  // key name: exactly 17 bytes
  // records: 2 x 24 (owner 16 elided to empty, class/type/ttl 8) = 48
  // rdata blob: 2 x (2-byte length + 4 bytes) = 12
  const double expect_net = 168 + 17 + 48 + 12 + static_cast<double>(bucket_bytes);
  CHECK(m.entries == 1);
  CHECK(m.net_bytes == expect_net);
  CHECK(m.allocs == 5);  // node, name, records, rdata blob, buckets
  CHECK(m.alloc_bytes == allocated({168, 17, 48, 12, bucket_bytes}));
}

TEST_CASE("destroying a layout returns everything it counted", "[layouts][accounting]") {
  AllocCounter outer;
  CounterScope scope(&outer);
  {
    auto v4 = make_layout_v4();
    const LayoutMemory m = one_entry(*v4);
    CHECK(m.net_bytes > 0);
  }
  // The layout counted on its own counter, not on the scope around it.
  const AllocTotals t = outer.totals();
  CHECK(t.net_bytes == 0);
  CHECK(t.allocs == 0);
}

TEST_CASE("allocated_size rounds up to at least the request", "[layouts][accounting]") {
  for (std::size_t n : {1, 7, 16, 17, 40, 41, 184, 368, 1000, 5000}) {
    INFO(n);
    CHECK(allocated_size(n) >= n);
  }
  CHECK(allocated_size(0) == 0);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The sampled trace's draw: next_batch draws the next call's picks ahead; the requests
// are the same as without that (each pick drawn when its call comes), whatever the batch
// sizes; and the huge-page tables hold what was put in them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/fleet/huge_page_allocator.hpp"
#include "sim/fleet/sampled_trace.hpp"

using namespace dnsarena::sim::fleet;

namespace {
// Head and tail, ECS names, stray keys and a qtype mix: every branch of a draw uses the
// generator.
TrafficProfile mixed_profile() {
  TrafficProfile t;
  t.names = 200'000;
  t.zipf = 0.9;
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{60, 0.5}, {3600, 0.5}});
  t.ecs_share = 0.2;
  t.ecs_subnets = 50;
  t.stray_nodata_share = 0.03;
  t.stray_nxdomain_share = 0.02;
  return t;
}

std::vector<SampledTrace::Draw> draw_all(SampledTrace& trace, std::size_t total, const std::vector<std::size_t>& sizes,
                                         bool lookahead) {
  std::vector<SampledTrace::Draw> out(total);
  std::size_t done = 0;
  for (std::size_t k = 0; done < total; ++k) {
    const std::size_t n = std::min(sizes[k % sizes.size()], total - done);
    if (!lookahead) trace.drop_lookahead();
    trace.next_batch(out.data() + done, n);
    done += n;
  }
  return out;
}
}  // namespace

TEST_CASE("trace draws: the picks drawn ahead give the same requests, batch sizes changing or not",
          "[fleet][trace]") {
  const TrafficProfile t = mixed_profile();
  constexpr std::size_t kTotal = 20'000;
  const std::vector<std::size_t> sizes = GENERATE(std::vector<std::size_t>{16}, std::vector<std::size_t>{1, 16, 7, 64, 3, 16, 16, 33});
  SampledTrace ahead(t, 0.05, 9, 40, 5000, 3600);
  SampledTrace fresh(t, 0.05, 9, 40, 5000, 3600);
  REQUIRE(!ahead.head_keys().empty());
  REQUIRE(ahead.tail_blocks() > 0);
  const auto a = draw_all(ahead, kTotal, sizes, true);
  const auto b = draw_all(fresh, kTotal, sizes, false);
  std::size_t head = 0, ecs = 0, stray = 0;
  for (std::size_t i = 0; i < kTotal; ++i) {
    INFO("request " << i);
    REQUIRE(a[i].head_index == b[i].head_index);
    REQUIRE(a[i].key.id() == b[i].key.id());
    REQUIRE(a[i].key.ecs == b[i].key.ecs);
    if (a[i].head_index >= 0) {
      const HeadKey& h = ahead.head_keys()[static_cast<std::size_t>(a[i].head_index)];
      REQUIRE(a[i].key.id() == h.key.id());
      REQUIRE(a[i].weight == h.weight);
      REQUIRE(a[i].ttl == h.ttl);
      ++head;
    }
    ecs += a[i].key.ecs;
    stray += is_stray(a[i].key);
  }
  // Both kinds of draws and every random branch were exercised.
  CHECK(head > 0);
  CHECK(head < kTotal);
  CHECK(ecs > 0);
  CHECK(stray > 0);
}

TEST_CASE("huge-page allocator: large and small blocks keep their contents", "[fleet][trace]") {
  // 3 MiB of cells (mapped 2 MiB-aligned) and a small block (operator new).
  std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>> large(3u << 17);
  std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>> small(100);
  REQUIRE(reinterpret_cast<std::uintptr_t>(large.data()) % HugePageAllocator<std::uint64_t>::kHugePage == 0);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = i * 3;
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = i + 7;
  large.resize(large.size() * 2, 1);  // reallocates: copied into a new mapping
  for (std::size_t i = 0; i < (3u << 17); ++i) REQUIRE(large[i] == i * 3);
  CHECK(large.back() == 1);
  for (std::size_t i = 0; i < small.size(); ++i) REQUIRE(small[i] == i + 7);
}

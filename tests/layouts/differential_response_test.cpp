// SPDX-License-Identifier: GPL-3.0-or-later
// Every layout must build the byte-identical DNS response for the same entry, query and
// clock: v0..v5 through sim/layouts/heap_response_writer, the arena through cache/.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sim/layouts/layout.hpp"
#include "sim/workload/entry_generator.hpp"

using namespace dnsarena;
using namespace dnsarena::sim::layouts;

namespace {

constexpr std::uint32_t kResponseNow = 1'767'225'600;

std::vector<std::unique_ptr<Layout>> all_layouts(std::uint64_t entries, double mean_padded) {
  std::vector<std::unique_ptr<Layout>> v;
  v.push_back(make_layout_v0());
  v.push_back(make_layout_v1());
  v.push_back(make_layout_v2());
  v.push_back(make_layout_v3());
  v.push_back(make_layout_v4());
  v.push_back(make_layout_v5());
  v.push_back(make_layout_arena(entries, mean_padded));
  return v;
}

std::uint16_t get16(const std::vector<std::uint8_t>& b, std::size_t at) {
  return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]);
}

}  // namespace

TEST_CASE("every layout writes the same response bytes as the arena", "[layouts][differential]") {
  sim::TrafficProfile profile = sim::benchmark_mix();
  profile.negative_share = 0.15;
  profile.cname_share = 0.20;
  profile.ecs_share = 0.20;
  const sim::EntryGenerator gen(profile, 7);
  constexpr std::uint64_t kEntries = 3000;
  // A roomy arena (index for twice the entries): no index-conflict eviction at this size.
  auto layouts = all_layouts(2 * kEntries, 400.0);

  std::vector<cache::RecordData> records;
  for (std::uint64_t i = 0; i < kEntries; ++i) {
    const sim::GeneratedEntry e = gen.generate(i);
    const cache::Answer a = e.answer(records);
    const EntryInput in{e.qname, e.qtype, 0, e.ecs, &a};
    for (auto& l : layouts) REQUIRE(l->insert(in, kResponseNow));
  }

  struct Variant {
    const char* what;
    cache::ResponseOptions options;
    std::uint16_t query_flags;
    std::uint32_t now;
  };
  cache::ResponseOptions edns;
  edns.edns = true;
  edns.edns_do = true;
  edns.max_size = 1232;
  cache::ResponseOptions tiny;  // forces TC on most entries
  tiny.max_size = 80;
  const Variant variants[] = {{"plain", {}, wire::kFlagRd, kResponseNow + 7},
                              {"edns+do, cd, later clock", edns, wire::kFlagRd | wire::kFlagCd, kResponseNow + 55},
                              {"80-byte limit", tiny, wire::kFlagRd, kResponseNow + 1}};

  std::uint64_t negatives = 0, cnames = 0, truncated = 0, compared = 0;
  std::vector<std::uint8_t> expect(65535), got(65535);
  for (std::uint64_t i = 0; i < kEntries; ++i) {
    const sim::GeneratedEntry e = gen.generate(i);
    negatives += e.negative;
    cnames += !e.cname_target.empty();
    for (const Variant& v : variants) {
      LookupInput q;
      q.query.id = static_cast<std::uint16_t>(i * 31);
      q.query.flags = v.query_flags;
      q.query.qname = e.qname;
      q.query.qtype = e.qtype;
      q.ecs = e.ecs;
      const cache::ResponseResult ref = layouts.back()->lookup_response(q, v.now, v.options, expect.data(), expect.size());
      INFO("entry " << i << ", " << v.what);
      REQUIRE(ref.size >= 12);
      truncated += ref.truncated;
      const std::vector<std::uint8_t> want(expect.begin(), expect.begin() + static_cast<std::ptrdiff_t>(ref.size));
      if (!ref.truncated && !e.negative)
        REQUIRE(get16(want, 6) == e.rdatas.size() + (e.cname_target.empty() ? 0 : 1));  // ANCOUNT
      for (std::size_t k = 0; k + 1 < layouts.size(); ++k) {
        INFO("layout " << layouts[k]->name());
        const cache::ResponseResult r = layouts[k]->lookup_response(q, v.now, v.options, got.data(), got.size());
        REQUIRE(r.truncated == ref.truncated);
        REQUIRE(std::vector<std::uint8_t>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(r.size)) == want);
        ++compared;
      }
    }
  }
  // The mix really exercised the interesting paths.
  CHECK(negatives > 200);
  CHECK(cnames > 300);
  CHECK(truncated > 100);
  CHECK(compared == kEntries * 3 * 6);
}

TEST_CASE("a missing or expired key gives no response in every layout", "[layouts][differential]") {
  const sim::EntryGenerator gen(sim::TrafficProfile{}, 3);
  auto layouts = all_layouts(10, 400.0);
  std::vector<cache::RecordData> records;
  const sim::GeneratedEntry e = gen.generate(0);
  const cache::Answer a = e.answer(records);
  for (auto& l : layouts) REQUIRE(l->insert({e.qname, e.qtype, 0, e.ecs, &a}, kResponseNow));
  std::vector<std::uint8_t> out(4096);
  const sim::GeneratedEntry other = gen.generate(1);
  for (auto& l : layouts) {
    INFO("layout " << l->name());
    LookupInput hit;
    hit.query.qname = e.qname;
    hit.query.qtype = e.qtype;
    CHECK(l->lookup_response(hit, kResponseNow + e.ttl - 1, {}, out.data(), out.size()).size > 0);
    CHECK(l->lookup_response(hit, kResponseNow + e.ttl, {}, out.data(), out.size()).size == 0);  // expired
    LookupInput miss = hit;
    miss.query.qname = other.qname;
    CHECK(l->lookup_response(miss, kResponseNow, {}, out.data(), out.size()).size == 0);
    LookupInput wrong_type = hit;
    wrong_type.query.qtype = e.qtype == 1 ? 28 : 1;
    CHECK(l->lookup_response(wrong_type, kResponseNow, {}, out.data(), out.size()).size == 0);
  }
}

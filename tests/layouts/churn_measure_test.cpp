// SPDX-License-Identifier: GPL-3.0-or-later
// measure_churn(): heap layouts filled to capacity then churned under jemalloc hold
// capacity entries (less the few generated entries that share a key), and the resident / allocated ratio it reports is read from
// the allocator (at least the active pages, which hold every allocated byte).
#include <catch2/catch.hpp>

#include <memory>

#include "sim/layouts/churn_measure.hpp"
#include "sim/layouts/layout.hpp"
#include "sim/workload/entry_generator.hpp"

using namespace dnsarena::sim;

TEST_CASE("churn: every heap layout ends at capacity, with resident >= active >= allocated", "[layouts][churn]") {
  const std::uint64_t capacity = 20'000;
  const auto rows = measure_churn(TrafficProfile{}, capacity, 7);
  REQUIRE(rows.size() == 6);
  for (const ChurnRow& r : rows) {
    INFO(r.layout << ": alloc " << r.alloc_bytes << " active " << r.active_bytes << " resident " << r.resident_bytes
                  << " unpurged " << r.resident_unpurged_bytes << " ratio " << r.resident_ratio);
    CHECK(r.live_entries <= capacity);
    CHECK(r.live_entries >= capacity * 99 / 100);  // a few generated entries share a key
    CHECK(r.alloc_bytes > 100);
    CHECK(r.measured == churn_uses_jemalloc());
    if (!r.measured) continue;
    CHECK(r.active_bytes >= r.alloc_bytes);
    CHECK(r.resident_bytes >= r.active_bytes);
    CHECK(r.resident_unpurged_bytes >= r.resident_bytes);
    CHECK(r.resident_ratio == Approx(r.resident_bytes / r.alloc_bytes));
    CHECK(r.resident_ratio < 3.0);
  }
}

TEST_CASE("a heap layout erases a held key and refuses an absent one", "[layouts][churn]") {
  const EntryGenerator gen(TrafficProfile{}, 3);
  std::vector<dnsarena::cache::RecordData> records;
  const GeneratedEntry e = gen.generate(5);
  const dnsarena::cache::Answer a = e.answer(records);
  for (auto make : {layouts::make_layout_v0, layouts::make_layout_v5}) {
    std::unique_ptr<layouts::Layout> l = make();
    const layouts::EntryInput in{e.qname, e.qtype, 0, e.ecs, &a};
    REQUIRE(l->insert(in, 100));
    CHECK(l->memory().entries == 1);
    CHECK(l->erase(in));
    CHECK(l->memory().entries == 0);
    CHECK(l->memory().alloc_bytes < 200);  // only the map's bucket array remains
    CHECK_FALSE(l->erase(in));
  }
}

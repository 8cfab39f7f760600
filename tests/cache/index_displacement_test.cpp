// SPDX-License-Identifier: GPL-3.0-or-later
// The index at full capacity: inserting exactly max_entries distinct keys must keep all of
// them. Greedy two-choice placement alone sometimes finds both 8-slot buckets full at
// load 0.8 and evicts an older entry early; the cuckoo step moves a resident to its other
// bucket instead.
#include "sim/workload/entry_generator.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using dnsarena::test::TestSegment;

TEST_CASE("filling to max_entries keeps every key: residents move to their other bucket", "[index][eviction]") {
  const std::uint64_t n = 20000;
  TestSegment ts(dnsarena::test::tiny_geometry(n, 1u << 20, 8));  // arena far larger than needed
  Cache c(ts.seg);
  const sim::EntryGenerator gen({}, 11);
  std::vector<RecordData> recs;
  sim::GeneratedEntry e;
  for (std::uint64_t i = 0; i < n; ++i) {
    gen.generate(i, e);
    REQUIRE(c.insert(e.key(), e.answer(recs), 1000) != InsertStatus::rejected);
  }
  const CacheStats st = c.stats();
  INFO("displacements " << st.counter(Counter::index_displacements) << ", conflict evictions "
                        << st.counter(Counter::conflict_evictions) << ", replaces " << st.counter(Counter::replaces));
  CHECK(st.counter(Counter::index_displacements) > 0);  // the situation did arise
  CHECK(st.counter(Counter::conflict_evictions) == 0);
  CHECK(st.live_entries + st.counter(Counter::replaces) == n);
  // Every key is still found, moved or not.
  EntryCopy copy;
  std::uint64_t found = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    gen.generate(i, e);
    found += c.lookup(e.key(), 1000, copy) == LookupStatus::hit;
  }
  CHECK(found == st.live_entries);
  dnsarena::test::check_invariants(c);
}

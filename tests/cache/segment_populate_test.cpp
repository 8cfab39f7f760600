// SPDX-License-Identifier: GPL-3.0-or-later
// Segment::populate(): maps every page up front (the first inserts then take no page
// faults), and populate() on an attached segment changes no byte of it.
#include <sys/mman.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "sim/workload/entry_generator.hpp"
#include "tests/test_skip.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

// MADV_POPULATE_WRITE exists in this kernel (Linux 5.14 and later).
bool kernel_populates() {
#ifdef MADV_POPULATE_WRITE
  void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = p != MAP_FAILED && ::madvise(p, 4096, MADV_POPULATE_WRITE) == 0;
  if (p != MAP_FAILED) ::munmap(p, 4096);
  return ok;
#else
  return false;
#endif
}

constexpr std::uint32_t kPopulateNow = 1'800'000'000;

}  // namespace

TEST_CASE("populate maps every page: a new segment is resident in full afterwards, not before", "[segment][populate]") {
  if (!kernel_populates())
    return skip_test("this kernel has no MADV_POPULATE_WRITE (Linux < 5.14): populate() is a no-op, nothing to check");
  TestSegment t(tiny_geometry(20'000, 64 * 1024, 64), "inserthot-populate");
  const std::size_t pages = t.seg.size() / 4096;
  REQUIRE(pages > 1000);
  // mincore() says which pages of the mapping are in memory; counting page faults instead
  // would also count a sanitizer's shadow memory.
  const auto resident = [&] {
    std::vector<unsigned char> in(pages + 1);
    REQUIRE(::mincore(t.seg.base(), t.seg.size(), in.data()) == 0);
    return static_cast<std::size_t>(std::count_if(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(pages),
                                                   [](unsigned char c) { return (c & 1) != 0; }));
  };
  const std::size_t before = resident();
  INFO(before << " of " << pages << " pages resident before populate()");
  CHECK(before < pages / 2);  // a new segment is sparse: create() writes the header only
  t.seg.populate();
  CHECK(resident() == pages);
}

TEST_CASE("populate on an attached segment changes nothing: the same entries hit and check is clean",
          "[segment][populate]") {
  TestSegment t(tiny_geometry(2'000, 64 * 1024, 16), "inserthot-populate");
  const sim::EntryGenerator gen(sim::benchmark_mix(), 7);
  std::vector<sim::GeneratedEntry> entries;
  for (std::uint64_t i = 0; i < 500; ++i) entries.push_back(gen.generate(i));
  {
    Cache writer(t.seg);
    std::vector<RecordData> recs;
    for (const auto& e : entries) REQUIRE(writer.insert(e.key(), e.answer(recs), kPopulateNow) == InsertStatus::inserted);
  }
  Segment attached = Segment::attach(t.name());
  const std::vector<std::uint8_t> image(attached.base(), attached.base() + attached.size());
  attached.populate();
  REQUIRE(std::equal(image.begin(), image.end(), attached.base()));
  Cache reader(attached);
  EntryCopy copy;
  for (const auto& e : entries) REQUIRE(reader.lookup(e.key(), kPopulateNow, copy) == LookupStatus::hit);
  check_invariants(reader);
}

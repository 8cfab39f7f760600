// Segment::populate(): maps every page up front, so the first inserts take no page
// faults, and populate() on an attached segment changes no byte of it.
#include <sys/mman.h>
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <vector>

#include "sim/workload/entry_generator.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

long minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

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

constexpr std::uint32_t kNow = 1'800'000'000;

}  // namespace

TEST_CASE("populate maps every page: writing each page of a new segment takes no page fault", "[segment][populate]") {
  if (!kernel_populates()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux < 5.14): populate() is a no-op, nothing to check");
    return;
  }
  TestSegment t(tiny_geometry(20'000, 64 * 1024, 64), "inserthot-populate");
  t.seg.populate();
  volatile std::uint8_t* base = t.seg.base();
  const std::size_t pages = t.seg.size() / 4096;
  REQUIRE(pages > 1000);
  const long before = minor_faults();
  for (std::size_t i = 0; i < pages; ++i) base[i * 4096 + 4095] = base[i * 4096 + 4095];  // same value back
  const long faults = minor_faults() - before;
  INFO(faults << " minor faults writing " << pages << " pages");
  // Without populate() every page faults once; allow a handful for the test's own stack.
  REQUIRE(faults < static_cast<long>(pages / 100));
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
    for (const auto& e : entries) REQUIRE(writer.insert(e.key(), e.answer(recs), kNow) == InsertStatus::inserted);
  }
  Segment attached = Segment::attach(t.name());
  const std::vector<std::uint8_t> image(attached.base(), attached.base() + attached.size());
  attached.populate();
  REQUIRE(std::equal(image.begin(), image.end(), attached.base()));
  Cache reader(attached);
  EntryCopy copy;
  for (const auto& e : entries) REQUIRE(reader.lookup(e.key(), kNow, copy) == LookupStatus::hit);
  check_invariants(reader);
}

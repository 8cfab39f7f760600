// common/proc_stats: mapping_pages() finds the mapping holding an address in
// /proc/self/smaps and counts its resident and huge-page bytes.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <string>

#include "common/proc_stats.hpp"

using namespace dnsarena::common;

namespace {
constexpr std::size_t kMiB = 1u << 20;

std::uint8_t* map_aligned(std::size_t bytes, int advice) {
  void* p = ::mmap(nullptr, bytes + 2 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  auto* a = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(p) + 2 * kMiB - 1) & ~(2 * kMiB - 1));
  REQUIRE(::madvise(a, bytes, advice) == 0);
  std::memset(a, 1, bytes);
  return a;
}
}  // namespace

TEST_CASE("mapping pages: size, resident and huge bytes of the mapping holding an address", "[common][proc]") {
  std::uint8_t* small = map_aligned(8 * kMiB, MADV_NOHUGEPAGE);
  const MappingPages s = mapping_pages(small + 12345);
  CHECK(s.size >= 8 * kMiB);
  CHECK(s.resident >= 8 * kMiB);
  CHECK(s.huge == 0);
  CHECK(mapping_pages(nullptr).size == 0);
  // THP for anonymous memory is a machine setting: when it allows madvise, a touched,
  // aligned, advised mapping is (mostly) on 2 MiB pages.
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(f)), {});
  std::uint8_t* huge = map_aligned(8 * kMiB, MADV_HUGEPAGE);
  const MappingPages h = mapping_pages(huge);
  if (modes.find("[never]") == std::string::npos && !modes.empty()) {
    CHECK(h.huge >= 2 * kMiB);
    CHECK(h.huge <= h.resident);
  } else {
    WARN("transparent huge pages are off here: only the small-page half was checked");
  }
}

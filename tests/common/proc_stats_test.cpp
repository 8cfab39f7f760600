// SPDX-License-Identifier: GPL-3.0-or-later
// common/proc_stats: mapping_pages() finds the mapping holding an address in
// /proc/self/smaps and counts its resident and huge-page bytes; shm_huge_pages_unavailable() reads the
// /dev/shm mount and shmem_enabled right.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>
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

TEST_CASE("shm huge pages: only a /dev/shm tmpfs mounted huge=within_size or always gives segments 2 MiB pages",
          "[common][proc]") {
  const std::string advise_mode = "always within_size [advise] never deny force";
  const std::string never_mode = "always within_size advise [never] deny force";
  auto why = [](const std::string& mode, const std::string& mounts_text) {
    std::istringstream mounts(mounts_text);
    return shm_huge_pages_unavailable(mode, mounts);
  };
  const std::string proc = "proc /proc proc rw,nosuid 0 0\n";
  // Debian's default mount: no huge= option is huge=never.
  CHECK_THAT(why(never_mode, proc + "tmpfs /dev/shm tmpfs rw,relatime,size=24683664k 0 0\n"),
             Catch::Contains("without huge=within_size") && Catch::Contains("remount,huge=within_size"));
  CHECK(why(never_mode, proc + "tmpfs /dev/shm tmpfs rw,relatime,huge=within_size 0 0\n").empty());
  CHECK(why(never_mode, "tmpfs /dev/shm tmpfs rw,huge=always,size=1g 0 0\n").empty());
  // huge=advise does not reach the fallocate'd pages of a segment.
  CHECK_THAT(why(advise_mode, "tmpfs /dev/shm tmpfs rw,huge=advise 0 0\n"), Catch::Contains("huge=advise"));
  // shmem_enabled's deny and force override every mount; its other words do not count.
  CHECK_THAT(why("always within_size advise never [deny] force", "tmpfs /dev/shm tmpfs rw,huge=always 0 0\n"),
             Catch::Contains("'deny'"));
  CHECK(why("always within_size advise never deny [force]", "tmpfs /dev/shm tmpfs rw 0 0\n").empty());
  CHECK_FALSE(why("[always] within_size advise never deny force", "tmpfs /dev/shm tmpfs rw 0 0\n").empty());
  // The last of several mounts on /dev/shm is the one in use; an option that only
  // contains the word (a size= or a path) is not the huge= option.
  CHECK(why(never_mode, "tmpfs /dev/shm tmpfs rw 0 0\ntmpfs /dev/shm tmpfs rw,huge=within_size 0 0\n").empty());
  CHECK_FALSE(why(never_mode, "tmpfs /dev/shm tmpfs rw,huge=within_size 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n").empty());
  CHECK_FALSE(why(never_mode, "tmpfs /dev/shm tmpfs rw,nohuge=always 0 0\n").empty());
  CHECK_THAT(why(never_mode, proc), Catch::Contains("no tmpfs"));
  CHECK_THAT(why(never_mode, "/dev/sda1 /dev/shm ext4 rw 0 0\n"), Catch::Contains("not a tmpfs"));
}

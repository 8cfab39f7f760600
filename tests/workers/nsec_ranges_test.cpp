// SPDX-License-Identifier: GPL-3.0-or-later
// The host table of validated NSEC ranges (workers/nsec_ranges.hpp): records by zone,
// replaced by (zone, owner), bounded per zone and in bytes, expired by their time; and
// across fork(): a writer killed -9 in the middle of its writes never leaves a record a
// reader takes torn.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <vector>

#include "common/monotonic_clock.hpp"
#include "tests/workers/endless_writer.hpp"
#include "workers/nsec_ranges.hpp"

using dnsarena::workers::NsecRanges;

namespace {

// A record whose bytes all follow from its first: a reader can tell a torn copy.
std::vector<std::uint8_t> patterned(std::uint8_t first, std::size_t size) {
  std::vector<std::uint8_t> r(size);
  for (std::size_t i = 0; i < size; ++i) r[i] = static_cast<std::uint8_t>(first + i * 7);
  return r;
}
bool consistent(std::span<const std::uint8_t> r) {
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] != static_cast<std::uint8_t>(r[0] + i * 7)) return false;
  return true;
}

std::map<std::uint8_t, std::size_t> read_zone(const NsecRanges& t, std::uint64_t zone, std::uint32_t now) {
  std::vector<std::uint8_t> scratch(NsecRanges::kCapacity);
  std::map<std::uint8_t, std::size_t> seen;  // first byte -> size
  t.for_zone(zone, now, scratch, [&](std::span<const std::uint8_t> r, std::uint32_t) {
    seen[r[0]] = r.size();
    return true;
  });
  return seen;
}

}  // namespace

TEST_CASE("NSEC ranges: records by zone, replaced by owner, bounded, expired", "[workers][nsec_ranges]") {
  NsecRanges t(3, false);  // rounded up to 4 buckets
  CHECK(t.buckets() == 4);
  const std::uint64_t ms = dnsarena::common::monotonic_ms();
  const std::uint64_t zone = 0xabcdef, other = 0x123456;
  CHECK(t.put(zone, 1, 100, patterned(1, 300), ms));
  CHECK(t.put(zone, 2, 200, patterned(2, 40), ms));
  CHECK(t.put(other, 1, 100, patterned(3, 40), ms));
  CHECK(read_zone(t, zone, 50) == std::map<std::uint8_t, std::size_t>{{1, 300}, {2, 40}});
  CHECK(read_zone(t, other, 50).size() == 1);
  // The same (zone, owner): replaced in place.
  CHECK(t.put(zone, 1, 100, patterned(4, 80), ms));
  CHECK(read_zone(t, zone, 50) == std::map<std::uint8_t, std::size_t>{{2, 40}, {4, 80}});
  // Expired at its second: not read.
  CHECK(read_zone(t, zone, 100) == std::map<std::uint8_t, std::size_t>{{2, 40}});
  CHECK(read_zone(t, zone, 200).empty());
  // Bounds: no empty record, none over kCapacity, no zone 0.
  CHECK_FALSE(t.put(zone, 3, 100, {}, ms));
  CHECK_FALSE(t.put(zone, 3, 100, patterned(5, NsecRanges::kCapacity + 1), ms));
  CHECK(t.put(zone, 3, 100, patterned(5, NsecRanges::kCapacity), ms));
  CHECK_FALSE(t.put(0, 3, 100, patterned(5, 10), ms));
  // A zone keeps at most kWays ranges: more evict the one that expires first.
  for (std::uint64_t owner = 10; owner < 10 + 2 * NsecRanges::kWays; ++owner)
    CHECK(t.put(zone, owner, static_cast<std::uint32_t>(1000 + owner), patterned(static_cast<std::uint8_t>(owner), 16), ms));
  const auto kept = read_zone(t, zone, 50);
  CHECK(kept.size() <= NsecRanges::kWays);
  CHECK(kept.contains(static_cast<std::uint8_t>(10 + 2 * NsecRanges::kWays - 1)));  // the latest
  CHECK_FALSE(kept.contains(10));                                                   // the first to expire
}

TEST_CASE("NSEC ranges: a writer killed -9 mid-write leaves no torn record a reader takes",
          "[workers][nsec_ranges][multiprocess]") {
  NsecRanges t(1, true);
  const std::uint64_t zone = 42;
  const std::uint64_t ms = dnsarena::common::monotonic_ms();
  REQUIRE(t.put(zone, 1, 100, patterned(1, 1500), ms));
  // Rewrites the same few ranges with other contents as fast as it can.
  const pid_t writer = dnsarena::test::fork_endless_writer([&t, zone](std::uint64_t n) {
    t.put(zone, 1 + n % 3, 100, patterned(static_cast<std::uint8_t>(n), 1000 + n % 900),
          dnsarena::common::monotonic_ms());
  });
  std::vector<std::uint8_t> scratch(NsecRanges::kCapacity);
  std::size_t read_copies = 0, torn = 0;
  for (int round = 0; round < 20000; ++round)
    t.for_zone(zone, 50, scratch, [&](std::span<const std::uint8_t> r, std::uint32_t) {
      ++read_copies;
      torn += !consistent(r);
      return true;
    });
  dnsarena::test::kill_writer(writer);
  CHECK(read_copies > 0);
  CHECK(torn == 0);
  // After the kill: whatever slot it held mid-write is skipped, the rest read whole.
  t.for_zone(zone, 50, scratch, [&](std::span<const std::uint8_t> r, std::uint32_t) {
    CHECK(consistent(r));
    return true;
  });
  // A slot left being written is taken over once the write is older than kStaleWriteMs.
  const std::uint64_t later = dnsarena::common::monotonic_ms() + NsecRanges::kStaleWriteMs + 1;
  for (std::uint64_t owner = 1; owner <= 3; ++owner) CHECK(t.put(zone, owner, 100, patterned(9, 64), later));
  CHECK(read_zone(t, zone, 50).at(9) == 64);
}

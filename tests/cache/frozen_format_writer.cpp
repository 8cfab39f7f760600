// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a segment in an old format with the frozen copy of that format's writer
// (tests/cache/frozen_format<N>/, FROZEN_NS = frozen<N>), filled with the known entries
// of tests/cache/warm_entries.hpp, for the warm-upgrade tests.
//
//   frozen_format<N>_writer SEGMENT MAX_ENTRIES ARENA_BYTES COUNT EXPIRED [TTL [AGE_STEP]]
//
// Prints "format <N>: <taken> entries" and exits 0; 1 with a message on any error.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cache.hpp"  // the frozen copy's: its directory comes first on the include path
#include "tests/cache/warm_entries.hpp"

namespace fz = dnsarena::FROZEN_NS;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s SEGMENT MAX_ENTRIES ARENA_BYTES COUNT EXPIRED [TTL [AGE_STEP]]\n", argv[0]);
    return 1;
  }
  try {
    fz::Geometry g;
    g.max_entries = std::stoull(argv[2]);
    g.arena_bytes = std::stoull(argv[3]);
    dnsarena::test::WarmSpec spec;
    spec.count = static_cast<unsigned>(std::stoul(argv[4]));
    spec.expired = static_cast<unsigned>(std::stoul(argv[5]));
    if (argc > 6) spec.ttl = static_cast<std::uint32_t>(std::stoul(argv[6]));
    if (argc > 7) spec.age_step = static_cast<std::uint32_t>(std::stoul(argv[7]));
    fz::Segment seg = fz::Segment::create(argv[1], g);
    fz::Cache cache(seg);
    const unsigned taken = dnsarena::test::write_warm_entries<fz::Cache, fz::CacheKey, fz::Answer, fz::RecordData>(
        cache, spec, fz::wall_clock_now(), [](fz::InsertStatus s) { return s == fz::InsertStatus::inserted; });
    std::printf("format %u: %u entries\n", seg.header().format_version, taken);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "frozen writer: %s\n", e.what());
    return 1;
  }
}

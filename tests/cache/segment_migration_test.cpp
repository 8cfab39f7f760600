// SPDX-License-Identifier: GPL-3.0-or-later
// Segment migration in one process (cache/segment_migration.hpp, cache/legacy/): which
// entries a smaller capacity or arena keeps (the newest), that they keep their bytes
// (expiry and TTL), that the result passes the invariant walker, and that what cannot be
// read (an unknown version) is refused with the versions this build reads, untouched.
// The old formats: each committed image (tests/cache/fixtures/) migrates entry for
// entry, byte for byte; served by `dnsarena serve`: tests/workers/warm_upgrade_test.cpp.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <optional>

#include "cache/failpoint.hpp"
#include "cache/legacy/segment_reader.hpp"
#include "cache/segment_migration.hpp"
#include "tests/cache/fixture_segment.hpp"
#include "tests/cache/test_segment.hpp"
#include "tests/cache/warm_entries.hpp"

namespace dnsarena::test {
namespace {

using namespace cache;

unsigned fill(Segment& seg, const WarmSpec& spec, std::uint32_t now) {
  Cache c(seg);
  return write_warm_entries<Cache, CacheKey, Answer, RecordData>(
      c, spec, now, [](InsertStatus s) { return s == InsertStatus::inserted; });
}

// The entry of `name` (type A) at `now`, or nothing.
std::optional<std::vector<std::uint8_t>> entry_of(Cache& c, const std::string& name, std::uint32_t now) {
  static EntryCopy copy;
  if (c.lookup(CacheKey(warm_wire(name), 1), now, copy) != LookupStatus::hit) return std::nullopt;
  return std::vector<std::uint8_t>(copy.span().begin(), copy.span().end());
}

bool holds(Cache& c, unsigned i, std::uint32_t now, std::uint32_t* expire = nullptr) {
  const auto entry = entry_of(c, warm_name(i), now);
  if (entry && expire) *expire = EntryReader(*entry).expire();
  return entry.has_value();
}

}  // namespace

TEST_CASE("a smaller capacity keeps the newest entries, byte for byte", "[migration]") {
  const std::uint32_t now = wall_clock_now();
  const WarmSpec spec{.count = 400, .expired = 9, .ttl = 3600, .age_step = 1};
  SegmentNameGuard name(unique_segment_name("upgrade-mig"));
  {
    Segment old = Segment::create(name.name(), tiny_geometry(1000, 64 << 10, 8));
    REQUIRE(fill(old, spec, now) == spec.count + spec.expired);
  }
  const Geometry smaller = tiny_geometry(250, 64 << 10, 8);
  OpenOutcome outcome{};
  MigrationReport report;
  Segment seg = Segment::open(name.name(), smaller, OpenPolicy::migrate, &outcome, &report);
  INFO(report.summary());
  REQUIRE(outcome == OpenOutcome::migrated);
  CHECK(report.from_version == kFormatVersion);
  CHECK(report.migrated == 250);
  CHECK(report.dropped == 150);
  CHECK(report.expired == 9);
  CHECK(report.malformed == 0);
  CHECK(seg.name() == name.name());
  CHECK(seg.geometry() == smaller);
  Cache c(seg);
  check_invariants(c);
  for (unsigned i = 0; i < 150; ++i) CHECK(!holds(c, i, now));
  for (unsigned i = 150; i < spec.count; ++i) {
    std::uint32_t expire = 0;
    REQUIRE(holds(c, i, now, &expire));
    CHECK(expire == now - warm_age(spec, i) + spec.ttl);  // the same absolute expiry
  }
}

TEST_CASE("every entry of each committed old-format image migrates with the bytes the current encoder gives it",
          "[migration]") {
  const Geometry to = tiny_geometry(1000, 64 << 10, 8);
  for (const FormatFixture& f : kFormatFixtures) {
    DYNAMIC_SECTION(f.file) {
      SegmentNameGuard name(unique_segment_name("upgrade-fixture"));
      install_fixture_segment(f, name.name());
      {
        const legacy::SegmentReader old(name.name());
        CHECK(old.format_version() == f.version);
        CHECK(old.geometry().max_entries == f.max_entries);
        CHECK(old.live_owners().empty());  // the writer released its stat slot
      }
      // The same entries written now by the current writer at the image's clock.
      SegmentNameGuard ref_name(unique_segment_name("upgrade-fixture-ref"));
      Segment ref_seg = Segment::create(ref_name.name(), to);
      REQUIRE(fill(ref_seg, f.spec, f.written_at) == f.spec.count + f.spec.expired);
      Cache ref(ref_seg);

      OpenOutcome outcome{};
      MigrationReport report;
      Segment seg = Segment::open(name.name(), to, OpenPolicy::migrate, &outcome, &report);
      INFO(report.summary());
      REQUIRE(outcome == OpenOutcome::migrated);
      CHECK(report.from_version == f.version);
      CHECK(report.migrated == f.spec.count);
      CHECK(report.expired == f.spec.expired);
      CHECK(report.dropped == 0);
      CHECK(report.malformed == 0);
      CHECK(report.stale == 0);
      Cache c(seg);
      check_invariants(c);
      const std::uint32_t now = wall_clock_now();
      for (unsigned i = 0; i < f.spec.count; ++i) {
        INFO("entry " << i);
        const auto migrated = entry_of(c, warm_name(i), now);
        REQUIRE(migrated);
        CHECK(EntryReader(*migrated).expire() == f.written_at - warm_age(f.spec, i) + f.spec.ttl);
        CHECK(*migrated == entry_of(ref, warm_name(i), f.written_at));
      }
      // The expired ones were not copied: not even a lookup at a time they lived finds one.
      for (unsigned j = 0; j < f.spec.expired; ++j) {
        const std::string x = "x" + std::to_string(j) + ".warm.test.";
        CHECK(entry_of(ref, x, f.written_at - 1000));
        CHECK(!entry_of(c, x, f.written_at - 1000));
      }
    }
  }
}

TEST_CASE("a smaller arena keeps the newest entries that fit without a reclaim", "[migration]") {
  const std::uint32_t now = wall_clock_now();
  const WarmSpec spec{.count = 3000, .ttl = 3600, .age_step = 1};
  SegmentNameGuard name(unique_segment_name("upgrade-mig"));
  {
    Segment old = Segment::create(name.name(), tiny_geometry(5000, 64 << 10, 8));
    REQUIRE(fill(old, spec, now) == spec.count);
  }
  const Geometry small = tiny_geometry(5000, 16 << 10, 4);  // 3 regions usable: ~1,000 entries of 48 bytes
  MigrationReport report;
  OpenOutcome outcome{};
  Segment seg = Segment::open(name.name(), small, OpenPolicy::migrate, &outcome, &report);
  INFO(report.summary());
  REQUIRE(outcome == OpenOutcome::migrated);
  CHECK(report.migrated + report.dropped == spec.count);
  CHECK(report.migrated > 900);
  CHECK(report.migrated < 1100);
  Cache c(seg);
  check_invariants(c);
  CHECK(c.stats().counter(Counter::evictions) == 0);  // nothing was copied only to be reclaimed
  const unsigned first_kept = spec.count - static_cast<unsigned>(report.migrated);
  CHECK(!holds(c, first_kept - 1, now));
  for (unsigned i = first_kept; i < spec.count; ++i) REQUIRE(holds(c, i, now));
}

TEST_CASE("a migration killed while copying leaves the old segment and the next open removes its temporary and "
          "migrates", "[migration]") {
  const std::uint32_t now = wall_clock_now();
  const WarmSpec spec{.count = 200, .ttl = 3600, .age_step = 1};
  SegmentNameGuard name(unique_segment_name("upgrade-mig"));
  {
    Segment old = Segment::create(name.name(), tiny_geometry(1000, 64 << 10, 8));
    REQUIRE(fill(old, spec, now) == spec.count);
  }
  const Geometry bigger = tiny_geometry(2000, 64 << 10, 8);
  const pid_t child = ::fork();
  if (child == 0) {
    // Die at the 100th entry appended to the new segment: half of the copy done.
    set_failpoint([n = 0](FailStep step, std::uint64_t) mutable {
      if (step == FailStep::append_published && ++n == 100) ::raise(SIGKILL);
    });
    try {
      Segment::open(name.name(), bigger, OpenPolicy::migrate);
    } catch (...) {
    }
    ::_exit(3);  // not killed: the failpoint was never reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  const std::string temp = migration_temp_name(name.name(), child);
  REQUIRE(Segment::exists(temp));  // what the dead migration left
  {
    const legacy::SegmentReader old(name.name());  // the old segment, untouched
    CHECK(old.geometry().max_entries == 1000);
  }
  MigrationReport report;
  OpenOutcome outcome{};
  Segment seg = Segment::open(name.name(), bigger, OpenPolicy::migrate, &outcome, &report);
  INFO(report.summary());
  CHECK(outcome == OpenOutcome::migrated);
  CHECK(report.migrated == spec.count);
  CHECK(!Segment::exists(temp));
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    CHECK(e.path().filename().string().rfind(name.name() + ".", 0) != 0);
  Cache c(seg);
  check_invariants(c);
  for (unsigned i = 0; i < spec.count; ++i) REQUIRE(holds(c, i, now));
}

TEST_CASE("a segment of a version without a reader is refused, untouched", "[migration]") {
  for (std::uint32_t version : {1u, kFormatVersion + 1}) {
    const Geometry g = tiny_geometry(100, 1024, 3);
    TestSegment ts(g, "upgrade-mig");
    SegmentHeader& h = ts.seg.header();
    h.format_version = version;
    h.identity_checksum = identity_checksum(h);
    try {
      Segment::open(ts.name(), tiny_geometry(200, 1024, 3), OpenPolicy::migrate);
      FAIL("version " << version << " was not refused");
    } catch (const SegmentError& e) {
      CHECK(e.kind() == SegmentError::Kind::version_mismatch);
      CHECK_THAT(e.what(), Catch::Contains("format version " + std::to_string(version) + ": this build reads versions 2 to " +
                                           std::to_string(kFormatVersion)));
    }
    CHECK(ts.seg.header().format_version == version);
    OpenOutcome outcome{};
    Segment::open(ts.name(), g, OpenPolicy::migrate_or_reset, &outcome);
    CHECK(outcome == OpenOutcome::recreated);
  }
}

TEST_CASE("the reader refuses a foreign object and one with a layout its geometry does not give", "[migration]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g, "upgrade-mig");
  SegmentHeader& h = ts.seg.header();
  h.index_offset += 64;
  h.identity_checksum = identity_checksum(h);
  REQUIRE_THROWS_WITH(legacy::SegmentReader(ts.name()), Catch::Contains("header layout does not follow"));
  h.magic = 0x1234;
  REQUIRE_THROWS_WITH(legacy::SegmentReader(ts.name()), Catch::Contains("not a dnsarena segment"));
}

}  // namespace dnsarena::test

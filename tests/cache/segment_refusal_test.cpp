// SPDX-License-Identifier: GPL-3.0-or-later
// Segment refusal: another format version, a damaged header, foreign magic, a truncated
// object and a wrong mode are refused with a message naming what was expected and what
// was found; reset recreates where that is safe; `dnsarena check` exits 2 with the reason.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

#include "test_answers.hpp"
#include "tests/test_skip.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::test;

namespace {

using Kind = SegmentError::Kind;

std::string hex16(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Runs `dnsarena check NAME`; returns the exit status and the combined output.
struct CheckRun {
  int status = -1;
  std::string output;
};
CheckRun run_check_command(const std::string& name) {
  CheckRun r;
  const std::string cmd = std::string(DNSARENA_BINARY) + " check " + name + " 2>&1";
  std::fflush(nullptr);
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[512];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Attaching must throw a SegmentError of `kind` whose message contains every fragment.
void require_refusal(const std::string& name, Kind kind, std::initializer_list<std::string> fragments) {
  try {
    Segment s = Segment::attach(name);
    FAIL("attach succeeded, expected a refusal");
  } catch (const SegmentError& e) {
    INFO("message: " << e.what());
    REQUIRE(static_cast<int>(e.kind()) == static_cast<int>(kind));
    for (const auto& f : fragments) REQUIRE_THAT(e.what(), Catch::Contains(f));
  }
}

void require_check_refuses(const std::string& name, const std::string& fragment) {
  const CheckRun r = run_check_command(name);
  INFO("dnsarena check output: " << r.output);
  REQUIRE(r.status == 2);
  REQUIRE_THAT(r.output, Catch::Contains(fragment));
}

void require_reset_recreates(const std::string& name, const Geometry& g) {
  REQUIRE_THROWS_AS(Segment::open(name, g, OpenPolicy::refuse), SegmentError);
  OpenOutcome outcome = OpenOutcome::attached;
  Segment fresh = Segment::open(name, g, OpenPolicy::reset, &outcome);
  REQUIRE(outcome == OpenOutcome::recreated);
  REQUIRE(fresh.header().format_version == kFormatVersion);
  REQUIRE(identity_checksum(fresh.header()) == fresh.header().identity_checksum);
  Cache c(fresh);
  OwnedAnswer a;
  a.add(kAnswer, {}, kA, 60, bytes_of({10, 0, 0, 1}));
  REQUIRE(c.insert(CacheKey(wire_name("after.reset"), kA), a.answer(), 1000) == InsertStatus::inserted);
  check_invariants(c);
  REQUIRE_NOTHROW(Segment::attach(name));
}

}  // namespace

TEST_CASE("a sound segment attaches and `dnsarena check` says so", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  REQUIRE_NOTHROW(Segment::attach(ts.name()));
  OpenOutcome outcome = OpenOutcome::created;
  Segment again = Segment::open(ts.name(), g, OpenPolicy::refuse, &outcome);
  REQUIRE(outcome == OpenOutcome::attached);
  const CheckRun r = run_check_command(ts.name());
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE_THAT(r.output, Catch::Contains("sound"));
  REQUIRE_THROWS_AS(Segment::create(ts.name(), g), SegmentError);
}

TEST_CASE("a segment of another format version is refused and reset recreates it", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  SegmentHeader& h = ts.seg.header();
  h.format_version = kFormatVersion + 1;
  h.identity_checksum = identity_checksum(h);  // only the version differs
  const std::string found = "format version " + std::to_string(kFormatVersion + 1);
  const std::string expected = "reads version " + std::to_string(kFormatVersion);
  require_refusal(ts.name(), Kind::version_mismatch, {found, expected});
  require_check_refuses(ts.name(), found);
  require_reset_recreates(ts.name(), g);
}

TEST_CASE("other build features are refused like another version", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  SegmentHeader& h = ts.seg.header();
  h.build_features = kBuildFeatures ^ 0x1;  // "big-endian"
  h.identity_checksum = identity_checksum(h);
  require_refusal(ts.name(), Kind::version_mismatch, {hex16(kBuildFeatures ^ 0x1), hex16(kBuildFeatures)});
}

TEST_CASE("a damaged header is refused and reset recreates it", "[segment]") {
  const std::size_t where = GENERATE(9u, 33u, 41u, 60u, 100u);  // version, geometry, offsets
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  SegmentHeader& h = ts.seg.header();
  const std::uint64_t stored = h.identity_checksum;
  auto* bytes = reinterpret_cast<std::uint8_t*>(&h);
  INFO("flipped byte " << where);
  bytes[where] ^= 0x10;
  const std::uint64_t now_sum = identity_checksum(h);
  REQUIRE(now_sum != stored);
  require_refusal(ts.name(), Kind::damaged, {"damaged header", hex16(now_sum), hex16(stored)});
  require_check_refuses(ts.name(), "damaged header");
  require_reset_recreates(ts.name(), g);
}

TEST_CASE("foreign magic is refused", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  ts.seg.header().magic = 0x1122334455667788ULL;
  require_refusal(ts.name(), Kind::foreign, {hex16(0x1122334455667788ULL), hex16(kSegmentMagic)});
  require_check_refuses(ts.name(), "not a dnsarena segment");
  require_reset_recreates(ts.name(), g);
}

TEST_CASE("a truncated object is refused", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  SegmentNameGuard guard(unique_segment_name("trunc"));
  { Segment s = Segment::create(guard.name(), g); }  // unmapped before truncating
  const std::string path = "/dev/shm/" + guard.name();
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 100) == 0);
  ::close(fd);
  require_refusal(guard.name(), Kind::damaged, {"100 bytes", std::to_string(sizeof(SegmentHeader))});
  require_check_refuses(guard.name(), "100 bytes");
  require_reset_recreates(guard.name(), g);

  SECTION("a header intact but the object shorter than the header says") {
    Segment s = Segment::attach(guard.name());
    const std::uint64_t total = s.header().total_bytes;
    const int fd2 = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd2 >= 0);
    REQUIRE(::ftruncate(fd2, static_cast<off_t>(total - 4096)) == 0);
    ::close(fd2);
    require_refusal(guard.name(), Kind::damaged, {std::to_string(total - 4096), std::to_string(total)});
  }
}

TEST_CASE("a segment writable by group or others is refused, even with reset", "[segment]") {
  const Geometry g = tiny_geometry(100, 1024, 3);
  TestSegment ts(g);
  const std::string path = "/dev/shm/" + ts.name();
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE((st.st_mode & 07777) == 0600);  // created 0600 whatever the umask
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::fchmod(fd, 0666) == 0);
  ::close(fd);
  require_refusal(ts.name(), Kind::unsafe_permissions, {"0666", "0600"});
  require_check_refuses(ts.name(), "0666");
  try {
    Segment s = Segment::open(ts.name(), g, OpenPolicy::reset);
    FAIL("reset replaced a segment with unsafe permissions");
  } catch (const SegmentError& e) {
    REQUIRE(static_cast<int>(e.kind()) == static_cast<int>(Kind::unsafe_permissions));
  }
  REQUIRE(Segment::exists(ts.name()));  // not removed
}

TEST_CASE("a missing segment is reported as not found", "[segment]") {
  const std::string name = unique_segment_name("missing");
  require_refusal(name, Kind::not_found, {name});
  require_check_refuses(name, "does not exist");
}

TEST_CASE("creation reserves the memory: too little space in /dev/shm is a clear error, not SIGBUS later",
          "[segment]") {
  // ftruncate alone reserves nothing: a segment larger than the free space is created and
  // the first touch of an unbacked page kills a writer or a reader with SIGBUS. Ask for
  // more than /dev/shm has free (the check comes before any page is allocated, so this
  // does not fill the shared /dev/shm of the machine).
  struct statvfs vfs{};
  REQUIRE(::statvfs("/dev/shm", &vfs) == 0);
  const std::uint64_t free_bytes = std::uint64_t{vfs.f_bavail} * vfs.f_frsize;
  Geometry g;
  g.max_entries = 1000;
  g.region_bytes = 1u << 20;
  g.arena_bytes = (free_bytes / g.region_bytes + 64) * g.region_bytes;  // 64 MiB too many
  if (g.arena_bytes > kMaxArenaBytes) return skip_test("/dev/shm has more room than the largest arena: nothing to refuse");
  SegmentNameGuard guard(unique_segment_name("nospace"));
  try {
    Segment s = Segment::create(guard.name(), g);
    FAIL("a segment of " << g.arena_bytes << " bytes was created with " << free_bytes << " bytes free");
  } catch (const SegmentError& e) {
    INFO(e.what());
    CHECK(e.kind() == Kind::no_space);
    CHECK(std::string(e.what()).find("needs " + std::to_string(SegmentLayout::compute(g).total_bytes)) !=
          std::string::npos);
    CHECK(std::string(e.what()).find("free") != std::string::npos);
  }
  CHECK_FALSE(Segment::exists(guard.name()));
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Warm upgrade (cache/segment_migration.hpp): `dnsarena serve` on a segment of an older
// format (a committed image written by that format's writer, tests/cache/fixtures/), or
// on a warm current segment of another geometry, migrates it and answers its entries
// from the cache: the upstream (TestUpstream, which counts queries and knows none of
// these names) is never asked.
// Also: a corrupt old segment is refused with a clear error (or started cold when told
// to), and the temporary left by a migration that died is removed before migrating.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cache/cache.hpp"
#include "cache/format_version.hpp"
#include "cache/segment_migration.hpp"
#include "tests/cache/fixture_segment.hpp"
#include "tests/cache/warm_entries.hpp"
#include "tests/workers/serve_harness.hpp"
#include "tests/workers/test_upstream.hpp"

namespace dnsarena::test {
namespace {

struct RemoveSegment {
  std::string name;
  ~RemoveSegment() { cache::Segment::remove(name); }
};

const std::string kToCurrent = " -> " + std::to_string(cache::kFormatVersion);

std::uint8_t* shm_map(const std::string& segment, std::size_t* size) {
  const std::string path = "/dev/shm/" + segment;
  const auto bytes = std::filesystem::file_size(path);
  FILE* f = std::fopen(path.c_str(), "r+b");
  REQUIRE(f);
  static std::vector<std::uint8_t> data;
  data.resize(bytes);
  REQUIRE(std::fread(data.data(), 1, bytes, f) == bytes);
  std::fclose(f);
  *size = bytes;
  return data.data();
}

void shm_write(const std::string& segment, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  FILE* f = std::fopen(("/dev/shm/" + segment).c_str(), "r+b");
  REQUIRE(f);
  std::fseek(f, static_cast<long>(offset), SEEK_SET);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
}

std::vector<std::string> serve_args(std::uint16_t port, const std::string& segment, std::uint16_t upstream,
                                    std::uint64_t max_entries) {
  return {"--listen", "127.0.0.1:" + std::to_string(port), "--segment", segment, "--workers", "1",
          "--max-entries", std::to_string(max_entries), "--arena-bytes", "8M", "--log-level", "info",
          "--upstream", "127.0.0.1:" + std::to_string(upstream), "--upstream-timeout-ms", "300", "--no-metrics"};
}

// The A answer for warm entry i, from the cache: its address, and a TTL the entry's age
// (plus the seconds since `written`) below the TTL it was written with.
void require_warm_hit(std::uint16_t port, const WarmSpec& s, unsigned i, std::uint32_t written) {
  const DnsReply r = udp_exchange(port, make_query(static_cast<std::uint16_t>(i + 1), warm_name(i), 1));
  REQUIRE(r.answered);
  REQUIRE(r.rcode() == 0);
  const auto a = warm_address(i);
  char hex[16];
  std::snprintf(hex, sizeof hex, "1 %02x%02x%02x%02x", a[0], a[1], a[2], a[3]);
  REQUIRE(r.answers == std::vector<std::string>{hex});
  REQUIRE(r.records.size() == 1);
  const std::uint32_t elapsed = cache::wall_clock_now() - written;
  const std::uint32_t expected = s.ttl - warm_age(s, i) - elapsed;
  INFO("entry " << i << " ttl " << r.records[0].ttl << " expected about " << expected);
  REQUIRE(r.records[0].ttl <= expected + 1);
  REQUIRE(r.records[0].ttl + 2 >= expected);
}

bool leftovers(const std::string& segment) {
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(segment + ".", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("serve migrates a segment of each older format warm", "[warm_upgrade]") {
  for (const FormatFixture& f : kFormatFixtures) {
    if (f.spec.expired == 0) continue;  // the rows with expired entries: one per format
    DYNAMIC_SECTION(f.file) {
      TestUpstream upstream;
      RemoveSegment seg{unique_segment("upgrade-v" + std::to_string(f.version))};
      const WarmSpec& spec = f.spec;
      install_fixture_segment(f, seg.name);
      const std::uint16_t port = free_port();
      ServeProcess serve(serve_args(port, seg.name, upstream.port(), 1000), port);
      REQUIRE(serve.wait_ready());
      const std::string log = serve.log();
      INFO(log);
      CHECK(log.find("migrated (warm upgrade): format " + std::to_string(f.version) + kToCurrent) != std::string::npos);
      CHECK(log.find(": " + std::to_string(spec.count) + " migrated, 0 dropped (oldest first), " +
                     std::to_string(spec.expired) + " expired, 0 malformed, 0 index conflicts, in ") != std::string::npos);
      for (unsigned i = 0; i < spec.count; ++i) require_warm_hit(port, spec, i, f.written_at);
      CHECK(kdig_records(port, warm_name(5), "A").find("10.77.0.5") != std::string::npos);
      CHECK(upstream.queries() == 0);  // every answer came from the migrated cache
      CHECK(!leftovers(seg.name));
      REQUIRE(serve.stop() == 0);
      // The migrated segment is a current one: the next start re-attaches it warm.
      ServeProcess again(serve_args(port, seg.name, upstream.port(), 1000), port);
      REQUIRE(again.wait_ready());
      CHECK(again.log().find("re-attached (warm): " + std::to_string(spec.count) + " live entries") !=
            std::string::npos);
      require_warm_hit(port, spec, 0, f.written_at);
      CHECK(upstream.queries() == 0);
    }
  }
}

TEST_CASE("serve with a smaller --max-entries migrates a warm segment and drops the oldest", "[warm_upgrade]") {
  TestUpstream upstream;
  RemoveSegment seg{unique_segment("upgrade-resize")};
  const WarmSpec spec{.count = 300, .expired = 5, .ttl = 3600, .age_step = 1};
  const std::uint32_t written = cache::wall_clock_now();
  {
    cache::Geometry g;
    g.max_entries = 1000;
    g.arena_bytes = 8 << 20;
    cache::Segment s = cache::Segment::create(seg.name, g);
    cache::Cache c(s);
    REQUIRE(write_warm_entries<cache::Cache, cache::CacheKey, cache::Answer, cache::RecordData>(
                c, spec, written, [](cache::InsertStatus st) { return st == cache::InsertStatus::inserted; }) ==
            spec.count + spec.expired);
  }
  const std::uint16_t port = free_port();
  ServeProcess serve(serve_args(port, seg.name, upstream.port(), 200), port);
  REQUIRE(serve.wait_ready());
  const std::string log = serve.log();
  INFO(log);
  const std::string version = std::to_string(cache::kFormatVersion);
  CHECK(log.find("format " + version + " -> " + version +
                 ", max_entries 1000, arena 8388608 bytes -> max_entries 200, arena 8388608 bytes: "
                 "200 migrated, 100 dropped (oldest first), 5 expired, 0 malformed") != std::string::npos);
  // The 200 newest stay (e100..e299), the 100 oldest are gone: asking for one goes upstream.
  for (unsigned i = 100; i < spec.count; i += 11) require_warm_hit(port, spec, i, written);
  require_warm_hit(port, spec, 100, written);
  CHECK(upstream.queries() == 0);
  const DnsReply oldest = udp_exchange(port, make_query(7, warm_name(99), 1));
  REQUIRE(oldest.answered);
  CHECK(oldest.answers.empty());  // the upstream knows no such name: NXDOMAIN
  CHECK(upstream.queries() == 1);
  CHECK(!leftovers(seg.name));
}

TEST_CASE("a corrupt old segment is refused with the reason, or started cold with --reset-segment",
          "[warm_upgrade]") {
  TestUpstream upstream;
  RemoveSegment seg{unique_segment("upgrade-corrupt")};
  install_fixture_segment(format_fixture(2, 7), seg.name);
  shm_write(seg.name, 32, {0xFF, 0x7F});  // max_entries: the identity checksum no longer matches
  const std::uint16_t port = free_port();
  {
    ServeProcess serve(serve_args(port, seg.name, upstream.port(), 1000), port);
    CHECK(!serve.wait_ready(std::chrono::seconds(5)));
    CHECK(serve.stop() != 0);
    INFO(serve.log());
    CHECK(serve.log().find("has a damaged header: identity checksum") != std::string::npos);
    CHECK(serve.log().find("cannot be migrated") != std::string::npos);
  }
  CHECK(cache::Segment::exists(seg.name));  // refused, not removed
  auto args = serve_args(port, seg.name, upstream.port(), 1000);
  args.push_back("--reset-segment");
  ServeProcess serve(args, port);
  REQUIRE(serve.wait_ready());
  INFO(serve.log());
  CHECK(serve.log().find("recreated (format or geometry changed): 0 live entries") != std::string::npos);
}

TEST_CASE("entries of an old segment that do not parse are counted and never served", "[warm_upgrade]") {
  TestUpstream upstream;
  RemoveSegment seg{unique_segment("upgrade-garbled")};
  const FormatFixture& f = format_fixture(2, 0);  // no expired entries: the arena starts with e0
  const WarmSpec& spec = f.spec;
  install_fixture_segment(f, seg.name);
  // Garble the arena's first 256 bytes: the oldest entries (e0, e1, ...), written first.
  std::size_t size = 0;
  const std::uint8_t* image = shm_map(seg.name, &size);
  const auto& h = *reinterpret_cast<const cache::SegmentHeader*>(image);
  shm_write(seg.name, h.arena_offset + 16, std::vector<std::uint8_t>(240, 0xFF));
  const std::uint16_t port = free_port();
  ServeProcess serve(serve_args(port, seg.name, upstream.port(), 1000), port);
  REQUIRE(serve.wait_ready());
  const std::string log = serve.log();
  INFO(log);
  const auto at = log.find(" migrated, 0 dropped (oldest first), 0 expired, ");
  REQUIRE(at != std::string::npos);
  const auto start = log.rfind(": ", at) + 2;
  const unsigned migrated = static_cast<unsigned>(std::stoul(log.substr(start, at - start)));
  const unsigned malformed = static_cast<unsigned>(std::stoul(log.substr(log.find("expired, ", at) + 9)));
  CHECK(migrated + malformed == spec.count);
  CHECK(malformed >= 1);
  CHECK(malformed <= 10);
  for (unsigned i = spec.count - migrated; i < spec.count; ++i) require_warm_hit(port, spec, i, f.written_at);
  CHECK(upstream.queries() == 0);
  const DnsReply garbled = udp_exchange(port, make_query(9, warm_name(0), 1));
  REQUIRE(garbled.answered);
  CHECK(garbled.answers.empty());  // not the garbled bytes: the upstream's NXDOMAIN
  CHECK(upstream.queries() == 1);
}

TEST_CASE("the temporary of a migration that died is removed and the migration runs again", "[warm_upgrade]") {
  TestUpstream upstream;
  RemoveSegment seg{unique_segment("upgrade-crash")};
  const FormatFixture& f = format_fixture(3, 7);
  install_fixture_segment(f, seg.name);
  // What a killed migration leaves: "<name>.migrating.<pid>" of a pid that is gone, a
  // half-filled current-format segment.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string temp = cache::migration_temp_name(seg.name, dead);
  {
    cache::Geometry g;
    g.max_entries = 10;
    g.arena_bytes = 4 << 20;
    cache::Segment::create(temp, g);
  }
  REQUIRE(cache::Segment::exists(temp));
  const std::uint16_t port = free_port();
  ServeProcess serve(serve_args(port, seg.name, upstream.port(), 1000), port);
  REQUIRE(serve.wait_ready());
  INFO(serve.log());
  CHECK(serve.log().find("format 3" + kToCurrent) != std::string::npos);
  CHECK(serve.log().find(": " + std::to_string(f.spec.count) + " migrated, 0 dropped") != std::string::npos);
  CHECK(!cache::Segment::exists(temp));
  CHECK(!leftovers(seg.name));
  require_warm_hit(port, f.spec, f.spec.count - 1, f.written_at);
  CHECK(upstream.queries() == 0);
}

}  // namespace dnsarena::test

namespace dnsarena::test {

TEST_CASE("dnsarena migrate converts a stopped segment and refuses one still attached", "[warm_upgrade]") {
  RemoveSegment seg{unique_segment("upgrade-cmd")};
  install_fixture_segment(format_fixture(2, 7), seg.name);  // 60 live entries, 7 expired
  int status = -1;
  std::string out = run_command(dnsarena_binary() + " migrate " + seg.name + " --max-entries 30 2>&1", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("migrated: format 2" + kToCurrent + ", max_entries 256, arena 12288 bytes -> max_entries 30, arena "
                 "12288 bytes: 30 migrated, 30 dropped (oldest first), 7 expired, 0 malformed") != std::string::npos);
  {
    cache::Segment s = cache::Segment::attach(seg.name);
    cache::Cache attached(s, cache::SlotRole::tool);
    CHECK(attached.stats().live_entries == 30);
    out = run_command(dnsarena_binary() + " migrate " + seg.name + " --max-entries 20 2>&1", &status);
    CHECK(status != 0);
    CHECK(out.find("is still attached by 1 live process(es) (pid " + std::to_string(::getpid()) + ")") !=
          std::string::npos);
  }
  out = run_command(dnsarena_binary() + " migrate " + seg.name + " --max-entries 30 2>&1", &status);
  CHECK(status == 0);
  CHECK(out.find("nothing to do") != std::string::npos);
}

}  // namespace dnsarena::test

// SPDX-License-Identifier: GPL-3.0-or-later
// The miniature caches of workers/miss_ratio_curves.hpp: their geometry, the 1x model at
// R = 1 against the real cache it models (the same request stream must give the same
// hits, lookups and entries), the curve's order, and feeding from forked processes, one
// of them killed in the middle of its work.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "cache/cache.hpp"
#include "cache/segment_check.hpp"
#include "workers/miss_ratio_curves.hpp"

using namespace dnsarena;
using workers::MissRatioCurves;
using workers::MrcSettings;

namespace {

// "k<i>.example." keyed A, AAAA, or (i % 7 == 0) under an ECS /24; TTL by key, every
// fifth key a negative answer (NXDOMAIN with an SOA), sizes varying by key.
struct Stream {
  std::vector<std::uint8_t> name;
  cache::CacheKey key(std::uint64_t i) {
    const std::string label = "k" + std::to_string(i);
    name.clear();
    name.push_back(static_cast<std::uint8_t>(label.size()));
    name.insert(name.end(), label.begin(), label.end());
    static const char kSuffix[] = "\7example";
    name.insert(name.end(), kSuffix, kSuffix + 8);
    name.push_back(0);
    cache::EcsTag ecs;
    if (i % 7 == 0) {
      ecs.family = cache::EcsFamily::ipv4;
      ecs.prefix = 24;
      ecs.address = {10, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i), 0};
    }
    return cache::CacheKey(name, i % 3 == 0 ? 28 : 1, 0, ecs);
  }
  std::vector<std::uint8_t> entry(const cache::CacheKey& k, std::uint64_t i, std::uint32_t now) {
    std::vector<std::uint8_t> rdata(4 * (1 + i % 9), static_cast<std::uint8_t>(i));
    std::vector<cache::RecordData> recs;
    static const std::uint8_t kSoa[] = {2, 'n', 's', 0, 2, 'h', 'm', 0, 0, 0, 0, 1, 0, 0, 0, 1,
                                        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    cache::Answer a;
    a.ttl = 20 + static_cast<std::uint32_t>(i % 50) * 10;
    if (i % 5 == 0) {
      a.rcode = 3;
      recs.push_back({{}, 6, 1, a.ttl, kSoa});
      a.sections[cache::kAuthority] = recs;
    } else {
      const std::size_t len = k.blob().size() % 2 ? 4 : 16;
      for (std::size_t r = 0; r + len <= rdata.size(); r += len) recs.push_back({{}, 1, 1, a.ttl, {rdata.data() + r, len}});
      if (recs.empty()) recs.push_back({{}, 1, 1, a.ttl, {rdata.data(), 4}});
      a.sections[cache::kAnswer] = recs;
    }
    std::vector<std::uint8_t> out;
    REQUIRE(cache::encode_entry(k, a, now, out) > 0);
    return out;
  }
};

// A real cache of 64 regions of 8 KiB (what the 1x model at R = 1 is too).
cache::Geometry small_real() {
  cache::Geometry g;
  g.max_entries = 3000;
  g.arena_bytes = 64 * 8192;
  g.region_bytes = 8192;
  g.stat_slots = 4;
  return g;
}

MrcSettings every_key() {
  MrcSettings s;
  s.sample_rate = 1;
  s.min_sampled_entries = 0;
  s.max_sampled_entries = 1'000'000'000;
  return s;
}

// Serves `requests` Zipf(0.9) requests over `keys` keys from `real`, feeding the curves as
// serve's hooks do; the clock moves one second per 50 requests.
void drive(cache::Cache& real, MissRatioCurves& /*curves: fed through the hooks*/, std::uint64_t keys, std::uint64_t requests, std::uint64_t seed,
           std::uint32_t start) {
  std::vector<double> w(keys);
  for (std::uint64_t i = 0; i < keys; ++i) w[i] = std::pow(static_cast<double>(i + 1), -0.9);
  std::discrete_distribution<std::uint64_t> pick(w.begin(), w.end());
  std::mt19937_64 rng(seed);
  Stream s;
  cache::EntryCopy copy;
  for (std::uint64_t n = 0; n < requests; ++n) {
    const std::uint32_t now = start + static_cast<std::uint32_t>(n / 50);
    const std::uint64_t i = pick(rng);
    const cache::CacheKey k = s.key(i);
    if (real.lookup(k, now, copy) == cache::LookupStatus::hit) {
      workers::mrc_feed_hit(real, k, now);
    } else {
      const std::vector<std::uint8_t> e = s.entry(k, i, now);
      real.insert_encoded(k, e, now);
      workers::mrc_feed_answer(k, e, now, 1);
    }
  }
}

}  // namespace

TEST_CASE("mrc: the documented geometry: scaled regions, R within its bounds", "[workers][mrc]") {
  cache::Geometry real;
  real.max_entries = 1'000'000;
  real.arena_bytes = 256ull << 20;
  real.region_bytes = 1u << 20;
  MrcSettings s;
  CHECK(workers::mrc_base_rate(100'000, s) == Approx(0.01));  // 1,000 / 100,000: the floor
  s.min_sampled_entries = 0;
  CHECK(workers::mrc_base_rate(real.max_entries, s) == Approx(0.001));
  CHECK(workers::mrc_base_rate(1'000'000'000, s) == Approx(65'536e-9));  // the ceiling
  CHECK(workers::mrc_base_rate(100, every_key()) == 1.0);
  // 1x at R = 1/128: regions of 8 KiB, as many as the real ring (256).
  const cache::Geometry g1 = workers::mrc_model_geometry(real, 1, 1.0 / 128, 4);
  CHECK(g1.region_bytes == 8192);
  CHECK(g1.arena_bytes == 256u * 8192);
  CHECK(g1.max_entries == 7813);
  // 1/8x at R = 1/1024: regions floored at 8 KiB, fewer of them, same average live bytes.
  const cache::Geometry g8 = workers::mrc_model_geometry(real, 0.125, 1.0 / 1024, 4);
  CHECK(g8.region_bytes == workers::kMrcMinRegionBytes);
  const double live_real = 254.5 / 256 * (256.0 * (1 << 20)) / 8192;
  CHECK(static_cast<double>(g8.arena_bytes) / 8192 - 1.5 == Approx(live_real / 8192).margin(0.5));
  CHECK(g8.max_entries == 122);
  // The header and descriptor offsets, numerically (static_asserts check them at build too).
  CHECK(offsetof(workers::MrcHeader, seed) == 32);
  CHECK(offsetof(workers::MrcModelDesc, max_entries) == 24);
  CHECK(offsetof(workers::MrcModelDesc, region_count) == 44);
}

TEST_CASE("mrc: at R = 1 the 1x model sees exactly what the real cache saw, the curve rises with capacity",
          "[workers][mrc]") {
  cache::Segment seg = cache::Segment::create_private(small_real());
  cache::Cache real(seg);
  MissRatioCurves curves(small_real(), every_key(), 4);
  workers::set_host_curves(&curves);
  drive(real, curves, 20'000, 60'000, 7, 1'000'000);
  workers::set_host_curves(nullptr);
  const cache::CacheStats rs = real.stats();
  const std::vector<workers::MrcModelStats> m = curves.read();
  REQUIRE(m.size() == 7);
  const workers::MrcModelStats& one = m[3];
  CHECK(one.factor == 1);
  CHECK(one.rate == 1);
  CHECK(one.lookups == rs.counter(cache::Counter::lookups));
  CHECK(one.hits == rs.counter(cache::Counter::hits));
  CHECK(one.live_entries == rs.live_entries);
  CHECK(one.evictions == rs.counter(cache::Counter::evictions));
  CHECK(one.evictions > 0);  // the stream outgrows the 1x cache: eviction is exercised
  CHECK(one.expirations > 0);
  // Below 1x every key is sampled: hit rates fall with capacity, strictly here.
  CHECK(m[0].hit_rate() < m[1].hit_rate());
  CHECK(m[1].hit_rate() < m[2].hit_rate());
  CHECK(m[2].hit_rate() < m[3].hit_rate());
  // Above 1x, R/f of the keys: more capacity per sampled key still hits more.
  CHECK(m[3].hit_rate() < m[4].hit_rate());
  CHECK(m[4].lookups < m[3].lookups);
  CHECK(curves.shared_bytes() > 0);
}

TEST_CASE("mrc: processes forked after the curves feed one table, one killed mid-feed leaves it consistent",
          "[workers][mrc][multiprocess]") {
  MissRatioCurves curves(small_real(), every_key(), 4);
  workers::set_host_curves(&curves);
  std::vector<pid_t> kids;
  for (int c = 0; c < 3; ++c) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      cache::Segment seg = cache::Segment::create_private(small_real());
      cache::Cache real(seg);
      // Child 2 feeds without end until it is killed.
      drive(real, curves, 5'000, c == 2 ? ~0ull : 20'000, 100 + static_cast<std::uint64_t>(c), 2'000'000);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (int c = 0; c < 2; ++c) {
    int status = 0;
    REQUIRE(::waitpid(kids[static_cast<std::size_t>(c)], &status, 0) == kids[static_cast<std::size_t>(c)]);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  // Wait for the third to have fed, then kill it wherever it is (inside inserts too).
  while (curves.read()[0].lookups < 60'000) ::usleep(1000);
  ::kill(kids[2], SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(kids[2], &status, 0) == kids[2]);
  const std::uint64_t before = curves.read()[3].lookups;
  CHECK(before >= 40'000);
  // This process feeds on (repairing a model whose writer died holding its lock).
  cache::Segment seg = cache::Segment::create_private(small_real());
  cache::Cache real(seg);
  drive(real, curves, 5'000, 5'000, 9, 3'000'000);
  workers::set_host_curves(nullptr);
  CHECK(curves.read()[3].lookups == before + 5'000);
  // (Inserts skipped on a model's busy lock, lock_skips, happen here: three feeders on
  // two cores; the 1 ms wait is what keeps a query from waiting on a preempted one.)
  // Every model passes the segment's invariant walker.
  for (std::size_t i = 0; i < curves.models(); ++i) {
    cache::Cache c(curves.model_segment(i), cache::SlotRole::tool);
    const cache::CheckReport r = cache::check_segment(c);
    INFO("model " << i << ": " << (r.problems.empty() ? "" : r.problems.front()));
    CHECK(r.ok());
  }
}

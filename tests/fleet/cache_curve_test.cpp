// SPDX-License-Identifier: GPL-3.0-or-later
// Cold-start curves from the real cache: start, fill, plateau; ECS; SHARDS consistency.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/fleet/access_limit.hpp"
#include "sim/fleet/cache_curve.hpp"
#include "sim/fleet/che_model.hpp"

using namespace dnsarena::sim::fleet;

namespace {
TrafficProfile small_profile() {
  TrafficProfile t;
  t.names = 300'000;
  t.zipf = 0.9;
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{3600, 1.0}});
  return t;
}

OccupancyCurve run(const TrafficProfile& t, std::uint64_t capacity, double rate, std::uint32_t sample_entries,
                   std::uint32_t days = 1, std::uint64_t seed = 5) {
  CurveRequest r;
  r.traffic = &t;
  r.capacity = capacity;
  r.rate_qps = rate;
  r.sample_entries = sample_entries;
  r.max_days = days;
  r.seed = seed;
  return compute_curve(r);
}
}  // namespace

TEST_CASE("cold start: hit rate starts at 0 and rises and occupancy never exceeds capacity", "[fleet][curve]") {
  const TrafficProfile t = small_profile();
  const std::uint64_t cap = 20'000;
  const OccupancyCurve c = run(t, cap, 200, 4096);
  REQUIRE(c.entries.size() > 60);
  CHECK(c.entries[0] == 0);
  CHECK(c.hit_rate[0] == 0);
  CHECK(c.hit_rate[1] < c.hit_rate[60]);
  CHECK(c.plateau_hit_rate > c.hit_rate[1] + 0.05);
  for (std::size_t m = 0; m < c.entries.size(); ++m) {
    INFO("minute " << m);
    REQUIRE(c.entries[m] <= static_cast<float>(cap) * 1.0001f);
  }
  // The cache does fill (3,600 s TTLs, far more keys than capacity).
  CHECK(c.plateau_entries > 0.9 * cap);
}

TEST_CASE("TTLs shorter than the fill time: plateau below capacity", "[fleet][curve]") {
  TrafficProfile t = small_profile();
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{30, 1.0}});
  const std::uint64_t cap = 50'000;
  const OccupancyCurve c = run(t, cap, 100, 4096);
  CHECK(c.reached_plateau);
  // Unexpired entries plateau below capacity (expired ones wait in the log for reclaim).
  CHECK(c.plateau_unexpired < 0.5 * cap);
  CHECK(c.plateau_unexpired > 0);
  for (std::size_t m = 0; m < c.entries.size(); ++m) REQUIRE(c.unexpired[m] <= c.entries[m]);
  // Che's approximation agrees that it never fills.
  const CheEstimate che = che_estimate(t, 100, cap);
  CHECK_FALSE(che.fills);
}

TEST_CASE("ECS-heavy profile: more entries per name and more bytes than without ECS", "[fleet][curve]") {
  TrafficProfile plain = small_profile();
  plain.ttl = dnsarena::sim::TtlDistribution::from_buckets({{600, 1.0}});
  TrafficProfile ecs = plain;
  ecs.ecs_share = 0.4;
  ecs.ecs_subnets = 32;
  const std::uint64_t cap = 400'000;  // never binds: entries show the key multiplicity
  const OccupancyCurve a = run(plain, cap, 300, 4096);
  const OccupancyCurve b = run(ecs, cap, 300, 4096);
  CHECK(b.plateau_unexpired > 1.2 * a.plateau_unexpired);
  CHECK(b.mean_entry_bytes > a.mean_entry_bytes);
  CHECK(b.plateau_unexpired * b.mean_entry_bytes > a.plateau_unexpired * a.mean_entry_bytes);
  const CheEstimate ca = che_estimate(plain, 300, cap), cb = che_estimate(ecs, 300, cap);
  CHECK(cb.entries_per_name > ca.entries_per_name);
  CHECK(cb.ecs_entry_share > 0.3);
}

// The Zipf head is simulated in full and only the tail is sampled (sampled_trace.hpp):
// name-level sampling of the head alone gave ~2.6 points here.
TEST_CASE("SHARDS at two sampling rates gives hit rates within 2 points", "[fleet][curve][shards]") {
  const TrafficProfile t = small_profile();
  const std::uint64_t cap = 40'000;
  const OccupancyCurve lo = run(t, cap, 200, 4096, 1, 21);   // R = 0.1
  const OccupancyCurve hi = run(t, cap, 200, 16384, 1, 21);  // R = 0.4
  CHECK(lo.sample_rate < hi.sample_rate);
  CHECK(std::fabs(lo.plateau_hit_rate - hi.plateau_hit_rate) < 0.02);
  CHECK(std::fabs(lo.plateau_entries - hi.plateau_entries) / hi.plateau_entries < 0.05);
}

// Stray queries (NODATA/NXDOMAIN-like extra negative keys at a small share of a name's
// rate) mostly miss: the hit rate falls, by at most their share plus the capacity they take.
TEST_CASE("stray queries lower the hit rate by about their share", "[fleet][curve]") {
  TrafficProfile plain = small_profile();
  TrafficProfile stray = plain;
  stray.stray_nodata_share = 0.02;  // 2 NODATA + 3 NXDOMAIN keys per name
  stray.stray_nxdomain_share = 0.01;
  const std::uint64_t cap = 40'000;
  const OccupancyCurve a = run(plain, cap, 200, 40'000, 1, 9);  // R = 1: no sampling
  const OccupancyCurve b = run(stray, cap, 200, 40'000, 1, 9);
  const double che_a = che_estimate(plain, 200, cap).hit_rate, che_b = che_estimate(stray, 200, cap).hit_rate;
  INFO("cache " << a.plateau_hit_rate << " -> " << b.plateau_hit_rate << ", Che " << che_a << " -> " << che_b);
  CHECK(b.plateau_hit_rate < a.plateau_hit_rate);
  CHECK(a.plateau_hit_rate - b.plateau_hit_rate < 0.06);
  CHECK(che_b < che_a);
  CHECK(std::fabs((a.plateau_hit_rate - b.plateau_hit_rate) - (che_a - che_b)) < 0.02);
}

TEST_CASE("pipelined batches: a later request of a key sees the earlier request's insert", "[fleet][curve][batch]") {
  // 8 names x 3 qtypes = 24 keys, TTLs of a day, room for all, no sampling (R = 1): at
  // 100 q/s every batch of requests repeats keys. Served in trace order, each key misses
  // once and is inserted once; a pipeline that looked a batch up before inserting its
  // misses would insert a key again for each repeat within the batch.
  TrafficProfile t;
  t.names = 8;
  t.zipf = 0.5;
  t.ttl = dnsarena::sim::TtlDistribution::from_buckets({{86'400, 1.0}});
  const OccupancyCurve c = run(t, 1'000, 100, 4096);
  REQUIRE(c.sample_rate == 1.0);
  REQUIRE(c.head_names == 0);
  REQUIRE(c.sampled_requests > 100'000);
  CHECK(c.inserted.back() == 24.0f);
  CHECK(c.plateau_entries == Approx(24.0));
  CHECK(c.plateau_hit_rate == Approx(1.0));
}

TEST_CASE("the run counts its random memory accesses and its segment (the requests/s limit)", "[fleet][curve][limit]") {
  const TrafficProfile t = small_profile();
  const OccupancyCurve c = run(t, 20'000, 200, 4096);
  REQUIRE(c.sampled_requests > 0);
  // access_limit.hpp: 2 or 3 per lookup (head, tail), +1 on a match, +2 per insert.
  const double per_request = c.memory_accesses / static_cast<double>(c.sampled_requests);
  CHECK(per_request >= 2.0);
  CHECK(per_request <= 6.0);
  CHECK(c.segment_bytes > c.sampled_capacity * 64);
}

TEST_CASE("requests/s limit = 1e9 / (accesses per request x ns per access), measured on a buffer", "[fleet][limit]") {
  const RequestRateLimit l = request_rate_limit(3.0e6, 1.0e6, 4 << 20, 1);
  CHECK(l.accesses_per_request == Approx(3.0));
  CHECK(l.access.bytes == Approx(4 << 20));
  REQUIRE(l.access.independent_ns > 0);
  REQUIRE(l.access.dependent_ns > 0);
  CHECK(l.requests_per_s == Approx(1e9 / (3.0 * l.access.independent_ns)));
  CHECK(request_rate_limit(0, 0, 4 << 20, 1).requests_per_s == 0);  // no requests: no limit
}

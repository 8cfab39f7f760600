// SPDX-License-Identifier: GPL-3.0-or-later
// Curves and curve jobs survive the trip between MPI ranks bit for bit (curve_codec.hpp),
// and a damaged message is refused.
#include <catch2/catch.hpp>

#include <cstring>

#include "sim/fleet/curve_codec.hpp"
#include "sim/fleet/sweep_sim.hpp"

using namespace dnsarena::sim::fleet;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("curve job round trip", "[mpi]") {
  CurveJob j;
  j.fleet = "tiny";
  j.datacenter = "ecs";
  j.capacity = 15000;
  j.rate_qps = 250.0 * 1.2599210498948732;
  j.seed = 11 * 1000003 + 1;
  j.sample_entries = 2048;
  j.max_sample_rate = 0.5;
  j.max_days = 2;
  const CurveJob k = decode_job(encode_job(j));
  CHECK(k.fleet == j.fleet);
  CHECK(k.datacenter == j.datacenter);
  CHECK(k.capacity == j.capacity);
  CHECK(same_bits(k.rate_qps, j.rate_qps));
  CHECK(k.seed == j.seed);
  CHECK(k.sample_entries == j.sample_entries);
  CHECK(same_bits(k.max_sample_rate, j.max_sample_rate));
  CHECK(k.max_days == j.max_days);
  CHECK(encode_job(k) == encode_job(j));
}

TEST_CASE("curve round trip and damaged messages", "[mpi]") {
  OccupancyCurve c;
  for (int i = 0; i < 1000; ++i) {
    c.entries.push_back(i * 1.5f + 0.1f);
    c.hit_rate.push_back(i / 1000.0f);
    c.hit_rate_raw.push_back(i / 999.0f);
    c.inserted.push_back(i * 3.25f);
    if (i % 2) c.unexpired.push_back(i * 0.7f);
  }
  c.plateau_entries = 1234.5678;
  c.plateau_unexpired = 1000.25;
  c.plateau_hit_rate = 0.4321;
  c.plateau_inserts_per_min = 17.5;
  c.reached_plateau = true;
  c.sample_rate = 0.0123;
  c.head_names = 1024;
  c.head_expected_entries = 800.5;
  c.sampled_capacity = 40000;
  c.sampled_requests = 123456789;
  c.run_seconds = 1.25;
  c.mean_entry_bytes = 96.5;
  c.memory_accesses = 3.5e6;
  c.segment_bytes = 17'500'000;
  const std::string bytes = encode_curve(c);
  const OccupancyCurve d = decode_curve(bytes);
  CHECK(d.entries == c.entries);
  CHECK(d.hit_rate == c.hit_rate);
  CHECK(d.hit_rate_raw == c.hit_rate_raw);
  CHECK(d.inserted == c.inserted);
  CHECK(d.unexpired == c.unexpired);
  CHECK(same_bits(d.plateau_entries, c.plateau_entries));
  CHECK(same_bits(d.plateau_hit_rate, c.plateau_hit_rate));
  CHECK(d.reached_plateau);
  CHECK(d.head_names == c.head_names);
  CHECK(d.sampled_requests == c.sampled_requests);
  CHECK(same_bits(d.mean_entry_bytes, c.mean_entry_bytes));
  CHECK(same_bits(d.memory_accesses, c.memory_accesses));
  CHECK(d.segment_bytes == c.segment_bytes);
  CHECK(encode_curve(d) == bytes);
  CHECK_THROWS_WITH(decode_curve(bytes.substr(0, bytes.size() - 1)), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(decode_curve(bytes + "x"), Catch::Contains("left over"));
  CHECK_THROWS(decode_job(std::string(3, '\xff')));
}

TEST_CASE("sweep capacities: factors, entries, and clear errors", "[sweep]") {
  const auto caps = parse_capacities("0.5x, 1x,2X,4000000,750k,4M");
  REQUIRE(caps.size() == 6);
  CHECK(caps[0].factor);
  CHECK(caps[0].entries_for(6'000'000) == 3'000'000);
  CHECK(caps[2].entries_for(1000) == 2000);
  CHECK(caps[3].entries_for(1) == 4'000'000);
  CHECK(caps[4].entries_for(1) == 750'000);
  CHECK(caps[5].entries_for(1) == 4'000'000);
  CHECK(caps[1].label == "1x");
  CHECK_THROWS_WITH(parse_capacities("1x,abc"), Catch::Contains("'abc' is not a capacity"));
  CHECK_THROWS_WITH(parse_capacities("-2x"), Catch::Contains("'-2x' is not a capacity"));
  CHECK_THROWS_WITH(parse_capacities("0x"), Catch::Contains("not a capacity"));
  CHECK_THROWS_WITH(parse_capacities("1.5q"), Catch::Contains("not a capacity"));
  CHECK_THROWS_WITH(parse_capacities(" , "), Catch::Contains("no capacity given"));
  CHECK(split_list("a,,b , c") == std::vector<std::string>{"a", "b", "c"});
}

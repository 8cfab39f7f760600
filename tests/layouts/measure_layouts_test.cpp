// SPDX-License-Identifier: GPL-3.0-or-later
// measure_layouts(), the function the fleet simulator calls: rows, order and sanity.
#include <catch2/catch.hpp>

#include "sim/layouts/layout_measure.hpp"

using namespace dnsarena::sim;

TEST_CASE("measure_layouts gives one row per layout, in order", "[layouts][measure]") {
  const auto names = layout_names();
  REQUIRE(names == std::vector<std::string>{"v0", "v1", "v2", "v3", "v4", "v5", "arena"});
  const auto rows = measure_layouts(TrafficProfile{}, 4000, 11, true);
  REQUIRE(rows.size() == names.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO(rows[i].layout);
    CHECK(rows[i].layout == names[i]);
    CHECK(rows[i].net_bytes > 0);
    CHECK(rows[i].alloc_bytes >= rows[i].net_bytes);
    CHECK(rows[i].insert_per_s > 0);
    CHECK(rows[i].lookup_ns_p50 > 0);
  }
  // The published fleet's direction: each change saves bytes on the published fleet's mix.
  for (std::size_t i = 1; i < 6; ++i) CHECK(rows[i].net_bytes <= rows[i - 1].net_bytes);
  CHECK(rows[6].allocs == 0);  // the arena allocates nothing per entry
}

TEST_CASE("measure_layouts without speed leaves the speed fields at 0", "[layouts][measure]") {
  TrafficProfile ecs_heavy = benchmark_mix();
  ecs_heavy.ecs_share = 0.8;
  const auto rows = measure_layouts(ecs_heavy, 2000, 5, false);
  REQUIRE(rows.size() == 7);
  for (const auto& r : rows) {
    CHECK(r.insert_per_s == 0);
    CHECK(r.lookup_ns_p50 == 0);
    CHECK(r.net_bytes > 0);
  }
}

TEST_CASE("measure_layouts rejects zero entries", "[layouts][measure]") {
  CHECK_THROWS_AS(measure_layouts(TrafficProfile{}, 0, 1, false), std::invalid_argument);
}

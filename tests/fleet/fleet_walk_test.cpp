// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet walk (fleet_walk.hpp) against a direct computation: every instance's row
// from its latest event at every step, percentiles by sorting. Values are chosen exact in
// binary (RSS multiples of 2^20, hit rates multiples of 1/8, integer rates), so the sums
// do not depend on the order of additions and the rows must match exactly, whatever the
// span cut. Plus the walk's trip between MPI ranks (fleet_walk_codec.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/fleet/fleet_walk.hpp"
#include "sim/fleet/fleet_walk_codec.hpp"
#include "sim/fleet/rollout_sim.hpp"

using namespace dnsarena::sim::fleet;

namespace {

// Three tables (lengths 6, 9, 1), 40 instances with 1-4 events each over 60 steps of 5 minutes.
FleetWalk make_test_walk() {
  FleetWalk w;
  w.step_minutes = 5;
  w.steps = 60;
  const std::vector<std::vector<int>> tables = {{1, 3, 5, 6, 7, 7}, {2, 4, 8, 9, 11, 12, 12, 13, 14}, {10}};
  std::vector<float> values;
  for (const auto& t : tables)
    for (int v : t) values.push_back(static_cast<float>(v) * 1048576.0f);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  w.distinct = values;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    w.table_start.push_back(w.rows.size());
    for (std::size_t age = 0; age < tables[t].size(); ++age) {
      const float rss = static_cast<float>(tables[t][age]) * 1048576.0f;
      const auto value = static_cast<std::uint32_t>(std::lower_bound(values.begin(), values.end(), rss) - values.begin());
      w.rows.push_back({value, rss, static_cast<float>((age + t) % 9) / 8.0f});
    }
  }
  w.table_start.push_back(w.rows.size());
  std::uint64_t x = 12345;
  auto next = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  for (int i = 0; i < 40; ++i) {
    w.rate.push_back(static_cast<double>(1 + next(50)));
    w.event_start.push_back(w.events.size());
    std::int64_t minute = -static_cast<std::int64_t>(next(100));
    const std::uint64_t events = 1 + next(4);
    for (std::uint64_t e = 0; e < events; ++e) {
      const auto table = static_cast<std::uint32_t>(next(3));
      w.events.push_back({minute, table, static_cast<std::uint32_t>(e == 2 ? next(4) : 0), table == 2 ? 1u : 0u});
      minute += 1 + static_cast<std::int64_t>(next(120));  // some land between steps, some past the end
    }
  }
  w.event_start.push_back(w.events.size());
  return w;
}

// Step s computed directly.
RolloutStep direct(const FleetWalk& w, std::int64_t s) {
  const std::int64_t minute = s * w.step_minutes;
  std::vector<float> rss;
  double total = 0, hits = 0, requests = 0, upgraded = 0;
  for (std::size_t i = 0; i < w.instances(); ++i) {
    std::size_t e = w.event_start[i];
    while (e + 1 < w.event_start[i + 1] && w.events[e + 1].minute <= minute) ++e;
    const WalkEvent& ev = w.events[e];
    const std::int64_t size = static_cast<std::int64_t>(w.table_start[ev.table + 1] - w.table_start[ev.table]);
    const std::int64_t age = std::min((minute - ev.minute) / w.step_minutes + ev.start_age, size - 1);
    const WalkRow& row = w.rows[w.table_start[ev.table] + static_cast<std::size_t>(age)];
    rss.push_back(row.rss);
    total += row.rss;
    hits += w.rate[i] * row.hit;
    requests += w.rate[i];
    upgraded += ev.version;
  }
  std::sort(rss.begin(), rss.end());
  const auto at = [&](double q) {
    const double rank = std::ceil(q * static_cast<double>(rss.size()));
    return rss[std::min(rss.size() - 1, static_cast<std::size_t>(std::max(1.0, rank)) - 1)] / 1e9;
  };
  RolloutStep st;
  st.minute = minute;
  st.p50_gb = at(0.50), st.p90_gb = at(0.90), st.p98_gb = at(0.98), st.p99_gb = at(0.99);
  st.fleet_total_gb = total / 1e9;
  st.mean_hit_rate = hits / requests;
  st.upstream_qps = requests - hits;
  st.share_upgraded = upgraded / static_cast<double>(w.instances());
  return st;
}

void check_same(const RolloutStep& a, const RolloutStep& b) {
  INFO("minute " << b.minute);
  CHECK(a.minute == b.minute);
  CHECK(a.p50_gb == b.p50_gb);
  CHECK(a.p90_gb == b.p90_gb);
  CHECK(a.p98_gb == b.p98_gb);
  CHECK(a.p99_gb == b.p99_gb);
  CHECK(a.fleet_total_gb == b.fleet_total_gb);
  CHECK(a.mean_hit_rate == b.mean_hit_rate);
  CHECK(a.upstream_qps == b.upstream_qps);
  CHECK(a.share_upgraded == b.share_upgraded);
}

}  // namespace

TEST_CASE("fleet walk matches a direct computation, in one span and in many", "[walk]") {
  const FleetWalk w = make_test_walk();
  std::vector<RolloutStep> one(static_cast<std::size_t>(w.steps));
  walk_span(w, 0, w.steps, one.data());
  std::vector<RolloutStep> spans;
  walk_all_spans(w, spans);
  REQUIRE(spans.size() == one.size());
  REQUIRE(span_count(w.steps) == 32);
  for (std::int64_t s = 0; s < w.steps; ++s) {
    const RolloutStep expected = direct(w, s);
    check_same(one[static_cast<std::size_t>(s)], expected);
    check_same(spans[static_cast<std::size_t>(s)], expected);
  }
  // The walk saw restarts and upgrades: the upgraded share moves.
  CHECK(one.front().share_upgraded != one.back().share_upgraded);
}

TEST_CASE("fleet walk, span and steps survive the trip between ranks", "[walk][mpi]") {
  const FleetWalk w = make_test_walk();
  const FleetWalk back = decode_walk(encode_walk(w));
  std::vector<RolloutStep> a, b;
  walk_all_spans(w, a);
  walk_all_spans(back, b);
  REQUIRE(a.size() == b.size());
  for (std::size_t s = 0; s < a.size(); ++s) check_same(a[s], b[s]);
  const SpanTask span = decode_span(encode_span({7, 19}));
  CHECK(span.first == 7);
  CHECK(span.end == 19);
  const std::vector<RolloutStep> rows = decode_steps(encode_steps(a.data() + 3, 5));
  REQUIRE(rows.size() == 5);
  check_same(rows[4], a[7]);

  std::string cut = encode_walk(w);
  cut.resize(cut.size() - 3);
  CHECK_THROWS_WITH(decode_walk(cut), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(decode_span(encode_span({9, 4})), Catch::Contains("bad step range"));
  CHECK_THROWS_WITH(decode_steps(encode_span({1, 2}) + "x"), Catch::Contains("fleet steps"));
}

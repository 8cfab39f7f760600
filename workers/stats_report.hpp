// SPDX-License-Identifier: GPL-3.0-or-later
// Statistics of a running (or stopped) service, read from the segment's stat slots.
//
// Purpose: one collector shared by `dnsarena stats` (table, JSON) and /metrics
// (Prometheus text). Reading is lock-free (relaxed loads of per-process counters), costs
// one pass over the stat slots, and never changes the segment.
//
// Rows: one per worker index (slots with role worker; a restarted worker continues its
// predecessor's slot), one for every other process that counted something (supervisor,
// tools), and the total over all slots.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache.hpp"

namespace dnsarena::workers {

struct StatsRow {
  std::string name;  // "worker 0", "supervisor", "total"
  std::int64_t worker_index = -1;
  std::uint32_t pid = 0;  // 0: not running
  std::array<std::uint64_t, cache::kCounterCount> counters{};
  std::uint64_t get(cache::Counter c) const { return counters[static_cast<std::size_t>(c)]; }
  std::uint64_t queries() const { return get(cache::Counter::queries_udp) + get(cache::Counter::queries_tcp); }
  double hit_ratio() const {
    const auto l = get(cache::Counter::lookups);
    return l ? static_cast<double>(get(cache::Counter::hits)) / static_cast<double>(l) : 0.0;
  }
  // User-space nanoseconds per UDP query (TSC-timed batches; 0 before any).
  double user_ns_per_query() const {
    const auto q = get(cache::Counter::user_ns_queries);
    return q ? static_cast<double>(get(cache::Counter::user_ns)) / static_cast<double>(q) : 0.0;
  }
  double upstream_latency_ms() const {
    const auto q = get(cache::Counter::upstream_queries) - get(cache::Counter::upstream_timeouts);
    return q ? static_cast<double>(get(cache::Counter::upstream_latency_us)) / 1000.0 / static_cast<double>(q) : 0.0;
  }
};

struct StatsReport {
  std::vector<StatsRow> rows;  // workers by index, then others
  StatsRow total;
  cache::CacheStats cache;     // entries, bytes/entry...
  double interval_s = 0;       // > 0: rates below are measured over this interval
  std::vector<double> qps;     // per row, then total last (empty without an interval)
};

// Reads the counters. `cache` is a Cache over the segment (any role).
StatsReport collect_stats(cache::Cache& cache);
// Two reads `interval_s` apart, with queries/s per row.
StatsReport collect_stats_with_rates(cache::Cache& cache, double interval_s);

}  // namespace dnsarena::workers

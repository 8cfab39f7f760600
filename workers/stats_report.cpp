// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/stats_report.hpp"

#include <chrono>
#include <map>
#include <thread>

namespace dnsarena::workers {

StatsReport collect_stats(cache::Cache& cache) {
  StatsReport rep;
  rep.cache = cache.stats();
  cache::Segment& seg = cache.segment();
  std::map<std::uint64_t, StatsRow> workers;
  StatsRow others;
  others.name = "other";
  rep.total.name = "total";
  for (std::uint32_t i = 0; i < seg.layout().stat_slots; ++i) {
    const cache::StatSlot& s = seg.stat_slots()[i];
    const std::uint32_t owner = s.owner_pid.load(std::memory_order_relaxed);
    std::array<std::uint64_t, cache::kCounterCount> c{};
    bool any = owner != 0;
    for (std::size_t k = 0; k < cache::kCounterCount; ++k) {
      c[k] = s.counters[k].load(std::memory_order_relaxed);
      any = any || c[k] != 0;
    }
    if (!any) continue;
    StatsRow* row = &others;
    if (s.role == static_cast<std::uint32_t>(cache::SlotRole::worker)) {
      row = &workers[s.worker_index];
      row->name = "worker " + std::to_string(s.worker_index);
      row->worker_index = static_cast<std::int64_t>(s.worker_index);
      if (owner) row->pid = owner;
    }
    for (std::size_t k = 0; k < cache::kCounterCount; ++k) {
      row->counters[k] += c[k];
      rep.total.counters[k] += c[k];
    }
  }
  for (auto& [idx, row] : workers) rep.rows.push_back(row);
  rep.rows.push_back(others);
  return rep;
}

StatsReport collect_stats_with_rates(cache::Cache& cache, double interval_s) {
  const StatsReport a = collect_stats(cache);
  std::this_thread::sleep_for(std::chrono::duration<double>(interval_s));
  StatsReport b = collect_stats(cache);
  b.interval_s = interval_s;
  for (const StatsRow& row : b.rows) {
    std::uint64_t before = 0;
    for (const StatsRow& old : a.rows)
      if (old.name == row.name) before = old.queries();
    b.qps.push_back(static_cast<double>(row.queries() - before) / interval_s);
  }
  b.qps.push_back(static_cast<double>(b.total.queries() - a.total.queries()) / interval_s);
  return b;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/latency_histogram.hpp"

#include <nlohmann/json.hpp>

namespace dnsarena::workers {

std::uint64_t LatencyCounts::count() const {
  std::uint64_t n = 0;
  for (const std::uint64_t c : counts) n += c;
  return n;
}

void LatencyCounts::merge(const LatencyCounts& o) {
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) counts[i] += o.counts[i];
  sum_ns += o.sum_ns;
}

double LatencyCounts::quantile_ms(double q) const {
  const std::uint64_t total = count();
  if (total == 0) return -1;
  const double rank = q * static_cast<double>(total);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) {
    if (counts[i] == 0 || static_cast<double>(below + counts[i]) < rank) {
      below += counts[i];
      continue;
    }
    if (i == kLatencyBuckets - 1) break;  // in +Inf: the last finite bound
    const double lower = i == 0 ? 0.0 : static_cast<double>(kLatencyBoundsNs[i - 1]) / 1e6;
    const double upper = static_cast<double>(kLatencyBoundsNs[i]) / 1e6;
    return lower + (upper - lower) * (rank - static_cast<double>(below)) / static_cast<double>(counts[i]);
  }
  return static_cast<double>(kLatencyBoundsNs.back()) / 1e6;
}

LatencyCounts read_latency(const LatencyHistogram& h) {
  LatencyCounts c;
  for (std::size_t i = 0; i < kLatencyBuckets; ++i) c.counts[i] = h.counts[i].load(std::memory_order_relaxed);
  c.sum_ns = h.sum_ns.load(std::memory_order_relaxed);
  return c;
}

nlohmann::json latency_json(const LatencyCounts& c) {
  auto quantile = [&](double q) {
    const double v = c.quantile_ms(q);
    return v < 0 ? nlohmann::json() : nlohmann::json(v);
  };
  return {{"count", c.count()},
          {"sum_ms", c.sum_ms()},
          {"buckets", c.counts},
          {"p50_ms", quantile(0.5)},
          {"p90_ms", quantile(0.9)},
          {"p99_ms", quantile(0.99)}};
}

nlohmann::json latency_bounds_ms_json() {
  nlohmann::json b = nlohmann::json::array();
  for (const std::uint64_t ns : kLatencyBoundsNs) b.push_back(static_cast<double>(ns) / 1e6);
  return b;
}

const char* latency_le_text(std::size_t i) {
  static constexpr const char* kLe[kLatencyBuckets] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
                                                       "0.01",   "0.025",   "0.05",   "0.1",   "0.25",   "0.5",
                                                       "1",      "2.5",     "5",      "+Inf"};
  return i < kLatencyBuckets ? kLe[i] : "+Inf";
}

}  // namespace dnsarena::workers

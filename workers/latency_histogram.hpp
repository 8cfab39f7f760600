// SPDX-License-Identifier: GPL-3.0-or-later
// A latency histogram in shared memory, with Prometheus's fixed log-spaced buckets.
//
// Purpose: `stats` and /metrics show latency distributions (p50/p90/p99 of client hits and
// misses, upstream round trips), not only a running sum. Every worker writes the same
// histograms lock-free; readers sum them.
//
// Buckets (upper bounds, inclusive like Prometheus's `le`), in milliseconds:
//   0.1 0.25 0.5 1 2.5 5 10 25 50 100 250 500 1000 2500 5000, then +Inf.
// Fixed: every histogram of every process has the same bounds, so sums across workers
// and upstreams are exact and /metrics needs no per-histogram bucket list.
//
// Layout (136 bytes; part of the anonymous mappings that hold it: answer_metrics.hpp and
// upstream_health.hpp, whose diagrams place it):
//
//   offset       size  field    meaning
//   0 + 8*i      8     count i  atomic; samples in (bound i-1, bound i]; i = 15: over 5000 ms
//   128          8     sum_ns   atomic; sum of the samples, nanoseconds
//
// The counts are per bucket, not cumulative: one sample touches one bucket word and the
// sum, two adds. The total count is the sum of the buckets (no third word to keep in
// step). A reader's relaxed loads may see a sample's bucket without its sum or the other
// way round: benign, the next read agrees.
// Writes: add() (fetch_add) where several processes write the same histogram (upstream
// RTT), add_owned() (relaxed load and store, no locked instruction) where one process is
// the only writer (a worker's own row: answer_metrics.hpp).
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace dnsarena::workers {

inline constexpr std::size_t kLatencyBuckets = 16;  // 15 bounds, then +Inf
inline constexpr std::array<std::uint64_t, kLatencyBuckets - 1> kLatencyBoundsNs = {
    100'000,     250'000,     500'000,       1'000'000,     2'500'000,     5'000'000,
    10'000'000,  25'000'000,  50'000'000,    100'000'000,   250'000'000,   500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000};

// The bucket of a sample of `ns` nanoseconds: the first whose bound is >= ns (le is
// inclusive), kLatencyBuckets - 1 past the last bound. Constant time, it is on the hit
// path: consecutive bounds are at least 2x apart, so [2^b, 2^(b+1)) holds at most one
// bound; the bucket is the count of bounds below 2^b, plus one when ns is past the bound
// inside its power of two.
constexpr bool bounds_double_at_least() {
  for (std::size_t i = 1; i < kLatencyBoundsNs.size(); ++i)
    if (kLatencyBoundsNs[i] < 2 * kLatencyBoundsNs[i - 1]) return false;
  return true;
}
static_assert(bounds_double_at_least(), "latency_bucket needs at most one bound per power of two");
namespace latency_detail {
struct PowerOfTwoBuckets {
  std::array<std::uint8_t, 64> below{};    // bounds < 2^b
  std::array<std::uint64_t, 64> inside{};  // the bound in [2^b, 2^(b+1)), or ~0
};
inline constexpr PowerOfTwoBuckets kByPowerOfTwo = [] {
  PowerOfTwoBuckets t;
  for (unsigned b = 0; b < 64; ++b) {
    const std::uint64_t low = std::uint64_t{1} << b;
    t.inside[b] = ~std::uint64_t{0};
    for (const std::uint64_t bound : kLatencyBoundsNs) {
      if (bound < low) ++t.below[b];
      else if (b == 63 || bound < low << 1) t.inside[b] = bound;
    }
  }
  return t;
}();
}  // namespace latency_detail
constexpr unsigned latency_bucket(std::uint64_t ns) {
  const unsigned b = 63u - static_cast<unsigned>(__builtin_clzll(ns | 1));
  return latency_detail::kByPowerOfTwo.below[b] + (ns > latency_detail::kByPowerOfTwo.inside[b] ? 1u : 0u);
}

struct LatencyHistogram {
  std::atomic<std::uint64_t> counts[kLatencyBuckets];
  std::atomic<std::uint64_t> sum_ns;

  // `n` samples of `ns` each (a batch answered at once), from any process.
  void add(std::uint64_t ns, std::uint64_t n = 1) {
    counts[latency_bucket(ns)].fetch_add(n, std::memory_order_relaxed);
    sum_ns.fetch_add(ns * n, std::memory_order_relaxed);
  }
  // The same for the histogram's only writer.
  void add_owned(std::uint64_t ns, std::uint64_t n = 1) {
    auto& c = counts[latency_bucket(ns)];
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    sum_ns.store(sum_ns.load(std::memory_order_relaxed) + ns * n, std::memory_order_relaxed);
  }
};
static_assert(sizeof(LatencyHistogram) == 136 && offsetof(LatencyHistogram, sum_ns) == 128,
              "the histogram layout above: the mappings that hold it place it by this size");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared between processes: lock-free atomics only");

// A histogram read out (or summed over several), in this process's memory.
struct LatencyCounts {
  std::array<std::uint64_t, kLatencyBuckets> counts{};
  std::uint64_t sum_ns = 0;

  std::uint64_t count() const;
  double sum_ms() const { return static_cast<double>(sum_ns) / 1e6; }
  void merge(const LatencyCounts& o);
  // The q-quantile (0 < q < 1) in milliseconds, as Prometheus's histogram_quantile
  // estimates it: linear within the bucket that holds the rank (from 0 in the first), the
  // last finite bound when the rank is in +Inf. -1 without samples.
  double quantile_ms(double q) const;
};

// Relaxed loads of every word (they may come from slightly different moments).
LatencyCounts read_latency(const LatencyHistogram& h);

// {"count": N, "sum_ms": S, "buckets": [16 per-bucket counts], "p50_ms", "p90_ms",
// "p99_ms" (null without samples)}. The bounds are kLatencyBoundsNs, listed once by the
// snapshot that holds these (latency_bounds_ms_json).
nlohmann::json latency_json(const LatencyCounts& c);
nlohmann::json latency_bounds_ms_json();
// The bound of bucket i in seconds as /metrics writes `le` (Prometheus's base unit):
// "0.0001", "0.0025", "1", "+Inf".
const char* latency_le_text(std::size_t i);

}  // namespace dnsarena::workers

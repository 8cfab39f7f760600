// SPDX-License-Identifier: GPL-3.0-or-later
// Measurement helpers for benchmarks: a TSC clock for per-operation latency, percentiles,
// process memory from /proc, jemalloc's allocated bytes, and DRAM latency by pointer
// chasing (one dependent random access at a time over a buffer as large as the thing
// being measured) and the same with k independent chains (memory-level parallelism), so
// lookup latency can be judged against the memory it must touch.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/line_cycle.hpp"
#include "common/median.hpp"

namespace dnsarena::bench {

// Reads the time-stamp counter; calibrated against steady_clock once.
class TscClock {
public:
  TscClock();
  // lfence + rdtsc: waits for earlier instructions like rdtscp, and valgrind runs it
  // (rdtscp is an illegal instruction under valgrind 3.19, which stopped callgrind runs).
  static std::uint64_t ticks() {
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
  }
  double to_ns(std::uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick_; }
  // Median cost of an empty ticks() pair, subtracted from per-operation samples.
  double overhead_ns() const { return overhead_ns_; }

private:
  double ns_per_tick_ = 1.0;
  double overhead_ns_ = 0.0;
};

// p in [0, 100]. Reorders `v`.
double percentile(std::vector<double>& v, double p);
using common::median;  // common/median.hpp

struct ProcMemory {
  std::uint64_t rss_anon = 0, rss_file = 0, rss_shmem = 0;  // bytes
};
ProcMemory read_proc_memory(pid_t pid = 0);  // 0 = this process

// jemalloc stats.allocated after refreshing the epoch; 0 when jemalloc is not linked.
std::uint64_t heap_allocated_bytes();
bool heap_accounting_available();


// The memory-level-parallelism limit over the same kind of buffer: k independent pointer
// chains advanced in lock step (k = 8 and 16), nanoseconds per access; and the dependent
// chain (k = 1) over the same buffer, for comparison. A batched lookup that keeps as many
// misses in flight can approach fastest(); one whose stages wait on each line cannot.
struct MlpResult {
  double dependent_ns = 0, chains8_ns = 0, chains16_ns = 0;
  double fastest() const { return chains8_ns < chains16_ns ? chains8_ns : chains16_ns; }
};
// `pages`: the page size the measured segment got (4 KiB /dev/shm pages unless shmem
// huge pages are on), so that the chase pays the same address translation.
MlpResult mlp_ns_per_access(std::size_t bytes, std::uint64_t seed, common::PageAdvice pages,
                            std::size_t steps = 4'000'000);

double seconds_since(std::uint64_t steady_ns_start);
std::uint64_t steady_ns();

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// A pointer-chase buffer: one random cycle through every 64-byte line of an anonymous
// mapping (Sattolo's algorithm), each line holding the address of the next, and K chains
// walking it in lock step. What `dnsarena bench` measures DRAM latency and memory-level
// parallelism with (bench/measure.cpp), and what the simulator measures its curve runs'
// access limit with (sim/fleet/access_limit.cpp); they differ only in the page advice
// (the memory they stand for: /dev/shm segments get 4 KiB pages here, the curves'
// private segments ask for transparent huge pages) and in the clock.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnsarena::common {

enum class PageAdvice { huge_pages, small_pages };

class LineCycle {
public:
  static constexpr std::size_t kLine = 64;

  // At least 1,024 lines. Throws std::runtime_error when the mapping fails.
  LineCycle(std::size_t bytes, std::uint64_t seed, PageAdvice advice);
  ~LineCycle();
  LineCycle(const LineCycle&) = delete;
  LineCycle& operator=(const LineCycle&) = delete;

  std::size_t lines() const { return lines_; }
  // The line at position i of the cycle (i < lines()).
  std::uint8_t* at_position(std::size_t i) const { return base_ + std::size_t{order_[i]} * kLine; }

  // K chains started lines()/K apart along the cycle, advanced in lock step, so the K
  // loads of a step are independent and the core keeps up to K misses in flight. After
  // a warm-up eighth (TLB walk caches), returns the nanoseconds per access that
  // `clock_ns()` (a callable returning a time in ns) saw over `steps` accesses.
  template <std::size_t K, class ClockNs>
  double chase(std::size_t steps, ClockNs clock_ns) const {
    std::uint8_t* p[K];
    for (std::size_t c = 0; c < K; ++c) p[c] = at_position(c * (lines_ / K));
    const std::size_t rounds = std::max<std::size_t>(steps / K, 1);
    for (std::size_t i = 0; i < rounds / 8; ++i)
      for (std::size_t c = 0; c < K; ++c) p[c] = next(p[c]);
    const double t0 = static_cast<double>(clock_ns());
    for (std::size_t i = 0; i < rounds; ++i)
      for (std::size_t c = 0; c < K; ++c) p[c] = next(p[c]);
    const double ns = (static_cast<double>(clock_ns()) - t0) / static_cast<double>(rounds * K);
    for (std::size_t c = 0; c < K; ++c) asm volatile("" : : "r"(p[c]) : "memory");
    return ns;
  }

private:
  static std::uint8_t* next(std::uint8_t* p) { return *reinterpret_cast<std::uint8_t**>(p); }
  std::size_t lines_, len_ = 0;
  std::uint8_t* base_ = nullptr;
  std::vector<std::uint32_t> order_;
};

}  // namespace dnsarena::common

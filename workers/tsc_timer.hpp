// SPDX-License-Identifier: GPL-3.0-or-later
// User-space time per query, counted with the time-stamp counter.
//
// Purpose: tick-based rusage is too coarse on this kind of VM to say how much
// CPU a worker spends per query outside the kernel. The worker reads the TSC after
// recvmmsg returns a batch and again before sendmmsg, and adds the difference, converted
// to nanoseconds, to its stat slot (Counter::user_ns) with the batch's query count
// (Counter::user_ns_queries): `stats` and /metrics divide one by the other.
//
// Calibration: ns per tick = monotonic ns / TSC ticks since the timer was made, refined
// at most once a second, so it converges without a startup spin (a 1 ms baseline is
// already within 0.1% on an invariant TSC; the first batches use that).
// REQUIRES: an invariant TSC (constant rate across P-states; every x86-64 CPU of the
// last decade, and what KVM exposes). rdtsc is not serialising: an lfence before it keeps
// earlier instructions from leaking past the reading.
#pragma once
#include <time.h>

#include <cstdint>

namespace dnsarena::workers {

class TscTimer {
public:
  TscTimer() : mono0_(monotonic_ns()), tsc0_(ticks()) {}

  static std::uint64_t ticks() {
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
  }

  // Nanoseconds for `tick_count` ticks at the current calibration.
  std::uint64_t to_ns(std::uint64_t tick_count) {
    const std::uint64_t now_tsc = ticks();
    if (now_tsc - last_calibration_ > calibrate_every_ || ns_per_tick_ == 0) calibrate(now_tsc);
    return static_cast<std::uint64_t>(static_cast<double>(tick_count) * ns_per_tick_);
  }

private:
  static std::uint64_t monotonic_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  }
  void calibrate(std::uint64_t now_tsc) {
    const std::uint64_t mono = monotonic_ns();
    if (now_tsc > tsc0_ && mono > mono0_ + 1'000'000) {  // a baseline of at least 1 ms
      ns_per_tick_ = static_cast<double>(mono - mono0_) / static_cast<double>(now_tsc - tsc0_);
      calibrate_every_ = static_cast<std::uint64_t>(1e9 / ns_per_tick_);  // about a second of ticks
    } else if (ns_per_tick_ == 0) {
      ns_per_tick_ = 1.0 / 3.0;  // only until the first millisecond has passed: ~3 GHz
    }
    last_calibration_ = now_tsc;
  }

  std::uint64_t mono0_, tsc0_;
  std::uint64_t last_calibration_ = 0;
  std::uint64_t calibrate_every_ = 0;
  double ns_per_tick_ = 0;
};

}  // namespace dnsarena::workers

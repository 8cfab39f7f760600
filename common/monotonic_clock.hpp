// SPDX-License-Identifier: GPL-3.0-or-later
// CLOCK_MONOTONIC in microseconds and milliseconds: the clock of every timeout, deadline
// and backoff (it does not jump with the wall clock), and the one whose microseconds
// systemd's MONOTONIC_USEC wants.
#pragma once
#include <time.h>

#include <cstdint>

namespace dnsarena::common {

inline std::uint64_t monotonic_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

inline std::uint64_t monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000000u;
}

}  // namespace dnsarena::common

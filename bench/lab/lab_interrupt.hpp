// SPDX-License-Identifier: GPL-3.0-or-later
// Ctrl-C (or SIGTERM) during a lab bench: the scenario running finishes and stops what it
// started, the remaining scenarios are skipped, and the bench says so and exits 1.
#pragma once
#include <atomic>

#include "common/process_limits.hpp"

namespace dnsarena::bench {

inline std::atomic<bool> g_lab_interrupted{false};

inline void install_lab_interrupt() {
  common::install_stop_signals([](int) { g_lab_interrupted = true; });
}

}  // namespace dnsarena::bench

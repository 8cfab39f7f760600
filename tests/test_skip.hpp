// SPDX-License-Identifier: GPL-3.0-or-later
// A test case that cannot run on this host (no IPv6 loopback, a kernel without a feature)
// is skipped where everyone sees it, never passed: skip_test() prints "SKIPPED: why" as a
// Catch2 warning and counts the skip, and the suite's main (tests/test_main.cpp) then
// exits 77, which ctest reports as "Skipped" (every Catch2 entry has SKIP_RETURN_CODE 77,
// tests/CMakeLists.txt). Catch2 v2 has no skip of its own (SKIP() came with v3.3).
// The caller returns right after:
//
//   if (!have_ipv6_loopback()) return skip_test("no IPv6 loopback: ::1 cannot be bound");
//
// A tool the suite needs (kdig, knotd, unbound, dnsperf...) is no reason to skip: it is
// installed by .ci/install-deps, so its absence fails the test, saying what to install.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

namespace dnsarena::test {

// ctest's SKIP_RETURN_CODE for the suite's binaries and scripts (tests/service uses it too).
inline constexpr int kSkippedExitCode = 77;

// Test cases skipped in this run of the binary.
inline std::atomic<unsigned>& skipped_test_cases() {
  static std::atomic<unsigned> n{0};
  return n;
}

inline void skip_test(const std::string& why) {
  WARN("SKIPPED: " << why);
  ++skipped_test_cases();
}

}  // namespace dnsarena::test

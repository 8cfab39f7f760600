// SPDX-License-Identifier: GPL-3.0-or-later
// The main of every Catch2 binary of the suite: Catch2's own, except that a run in which
// a test case was skipped (test_skip.hpp) and none failed exits 77, ctest's "Skipped"
// (SKIP_RETURN_CODE), rather than 0. A run with failures exits non-zero as before, never
// 77: Catch2 returns the number of failed assertions, and 77 of them must not read as a skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "tests/test_skip.hpp"

int main(int argc, char* argv[]) {
  const int rc = Catch::Session().run(argc, argv);
  if (rc != 0) return rc == dnsarena::test::kSkippedExitCode ? 1 : rc;
  if (const unsigned skipped = dnsarena::test::skipped_test_cases().load(); skipped > 0) {
    std::printf("%u test case%s skipped (exit %d)\n", skipped, skipped == 1 ? "" : "s",
                dnsarena::test::kSkippedExitCode);
    return dnsarena::test::kSkippedExitCode;
  }
  return 0;
}

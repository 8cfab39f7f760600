// SPDX-License-Identifier: GPL-3.0-or-later
// How a worker shares out its descriptors (workers/descriptor_budget.hpp).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "common/process_limits.hpp"
#include "workers/descriptor_budget.hpp"

using dnsarena::workers::DescriptorBudget;
using dnsarena::workers::kDescriptorMargin;
using dnsarena::workers::plan_descriptor_budget;

TEST_CASE("descriptor budget: listeners and margin first, then TCP, upstream gets the rest up to its cap",
          "[descriptors]") {
  // The documented example.
  const DescriptorBudget b = plan_descriptor_budget(1024, 10, 256, 1024);
  CHECK_FALSE(b.too_small);
  CHECK(b.fixed == 10 + kDescriptorMargin);
  CHECK(b.tcp == 256);
  CHECK(b.upstream == 1024 - 10 - kDescriptorMargin - 256);
  CHECK(b.describe() == "limit 1024: 10 open + 32 margin, TCP 256, upstream 726 (of 1024 configured)");
  // A large limit: both as configured.
  const DescriptorBudget big = plan_descriptor_budget(65536, 12, 256, 1024);
  CHECK_FALSE(big.too_small);
  CHECK(big.tcp == 256);
  CHECK(big.upstream == 1024);
  CHECK(big.describe() == "limit 65536: 12 open + 32 margin, TCP 256, upstream 1024");
  const DescriptorBudget unlimited = plan_descriptor_budget(RLIM_INFINITY, 12, 256, 1024);
  CHECK(unlimited.upstream == 1024);
  // Exactly enough for TCP and the smallest sane upstream share.
  const DescriptorBudget edge = plan_descriptor_budget(10 + 32 + 256 + 64, 10, 256, 1024);
  CHECK_FALSE(edge.too_small);
  CHECK(edge.upstream == 64);
  // A small configured upstream cap is sane at its own size.
  const DescriptorBudget small_cap = plan_descriptor_budget(100, 10, 50, 8);
  CHECK_FALSE(small_cap.too_small);
  CHECK(small_cap.tcp == 50);
  CHECK(small_cap.upstream == 8);
}

TEST_CASE("descriptor budget: a limit too small for the configured split is halved, TCP still gets in",
          "[descriptors]") {
  const DescriptorBudget b = plan_descriptor_budget(256, 10, 256, 1024);
  CHECK(b.too_small);
  CHECK(b.tcp == (256 - 42) / 2);
  CHECK(b.upstream == 256 - 42 - b.tcp);
  CHECK(b.tcp + b.upstream + b.fixed == 256);
  // Few TCP connections configured: they keep their number, upstream has the rest.
  const DescriptorBudget few = plan_descriptor_budget(120, 10, 16, 1024);
  CHECK(few.too_small);
  CHECK(few.tcp == 16);
  CHECK(few.upstream == 120 - 42 - 16);
  // Upstream's half above its cap goes to TCP: 20,000 with 14 open, two pools of 10,000.
  const DescriptorBudget big = plan_descriptor_budget(20000, 14, 20000, 1024);
  CHECK(big.too_small);
  CHECK(big.upstream == 1024);
  CHECK(big.tcp == 20000 - 46 - 1024);
  // Nothing above the fixed part: one of each, and the warning.
  const DescriptorBudget none = plan_descriptor_budget(30, 10, 256, 1024);
  CHECK(none.too_small);
  CHECK(none.tcp == 1);
  CHECK(none.upstream == 1);
}

TEST_CASE("descriptor budget: this process's limit and open descriptors are read", "[descriptors]") {
  const unsigned open = dnsarena::common::count_open_descriptors();
  CHECK(open >= 3);  // stdin, stdout, stderr at least
  const int fd = ::dup(1);
  REQUIRE(fd >= 0);
  CHECK(dnsarena::common::count_open_descriptors() == open + 1);
  ::close(fd);
  rlimit lim{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &lim) == 0);
  CHECK(dnsarena::common::nofile_soft_limit() == lim.rlim_cur);
}

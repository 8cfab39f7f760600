// SPDX-License-Identifier: GPL-3.0-or-later
// How a worker shares out its descriptors (workers/descriptor_budget.hpp).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "common/process_limits.hpp"
#include "workers/descriptor_budget.hpp"

using dnsarena::workers::DescriptorBudget;
using dnsarena::workers::kDescriptorMargin;
using dnsarena::workers::plan_descriptor_budget;
using dnsarena::workers::split_stream_budget;
using dnsarena::workers::StreamPools;

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

TEST_CASE("descriptor budget: stream pools keep their bounds when they fit, else shrink in proportion",
          "[descriptors]") {
  // Fits: unchanged, a pool that does not listen stays 0.
  const StreamPools fit = split_stream_budget({256, 10000, 0}, 10256);
  CHECK(fit.tcp == 256);
  CHECK(fit.tls == 10000);
  CHECK(fit.https == 0);
  // 10,000 idle DoT connections beside a small plain TCP pool fit under a 20,000 limit,
  // where two pools of 10,000 do not (the budget's documented example).
  const DescriptorBudget small_tcp = plan_descriptor_budget(20000, 14, 256 + 10000, 1024);
  CHECK_FALSE(small_tcp.too_small);
  const StreamPools held = split_stream_budget({256, 10000, 0}, small_tcp.tcp);
  CHECK(held.tls == 10000);
  CHECK(held.tcp == 256);
  const DescriptorBudget equal = plan_descriptor_budget(20000, 14, 20000, 1024);
  const StreamPools halved = split_stream_budget({10000, 10000, 0}, equal.tcp);
  CHECK(halved.tcp == 9465);
  CHECK(halved.tls == 9465);
  // Too small: each in proportion to its bound, never over the budget in all.
  const StreamPools shrunk = split_stream_budget({100, 300, 600}, 500);
  CHECK(shrunk.tcp == 50);
  CHECK(shrunk.tls == 150);
  CHECK(shrunk.https == 300);
  // A listening pool keeps at least one connection, even if that passes the budget by one.
  const StreamPools tiny = split_stream_budget({1000, 1, 1}, 100);
  CHECK(tiny.tcp == 99);
  CHECK(tiny.tls == 1);
  CHECK(tiny.https == 1);
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

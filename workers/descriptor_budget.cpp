// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/descriptor_budget.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/process_limits.hpp"

namespace dnsarena::workers {

std::string DescriptorBudget::describe() const {
  std::string s = "limit " + std::to_string(limit) + ": " + std::to_string(open_at_start) + " open + " +
                  std::to_string(kDescriptorMargin) + " margin, TCP " + std::to_string(tcp);
  if (tcp != tcp_configured) s += " (of " + std::to_string(tcp_configured) + " configured)";
  s += ", upstream " + std::to_string(upstream);
  if (upstream != upstream_configured) s += " (of " + std::to_string(upstream_configured) + " configured)";
  return s;
}

DescriptorBudget plan_descriptor_budget(rlim_t limit, unsigned open_now, unsigned tcp_max_connections,
                                        unsigned upstream_max_in_flight) {
  DescriptorBudget b;
  b.limit = limit == RLIM_INFINITY ? std::uint64_t{1} << 30 : std::min<std::uint64_t>(limit, std::uint64_t{1} << 30);
  b.open_at_start = open_now;
  b.fixed = open_now + kDescriptorMargin;
  b.tcp_configured = std::max(1u, tcp_max_connections);
  b.upstream_configured = std::max(1u, upstream_max_in_flight);
  const std::uint64_t above_fixed = b.limit > b.fixed ? b.limit - b.fixed : 0;
  const std::uint64_t sane_upstream = std::min(kMinUpstream, b.upstream_configured);
  if (above_fixed >= b.tcp_configured + sane_upstream) {
    b.tcp = b.tcp_configured;
    b.upstream = static_cast<unsigned>(std::min<std::uint64_t>(b.upstream_configured, above_fixed - b.tcp));
    return b;
  }
  b.too_small = true;
  const std::uint64_t half = std::clamp<std::uint64_t>(above_fixed / 2, 1, b.tcp_configured);
  const std::uint64_t rest = above_fixed > half ? above_fixed - half : 0;
  b.upstream = static_cast<unsigned>(std::clamp<std::uint64_t>(rest, 1, b.upstream_configured));
  // What upstream_max_in_flight leaves of its half goes to TCP too.
  const std::uint64_t unused = above_fixed > half + b.upstream ? above_fixed - half - b.upstream : 0;
  b.tcp = static_cast<unsigned>(std::min<std::uint64_t>(half + unused, b.tcp_configured));
  return b;
}

DescriptorBudget current_descriptor_budget(unsigned tcp_max_connections, unsigned upstream_max_in_flight) {
  return plan_descriptor_budget(common::nofile_soft_limit(), common::count_open_descriptors(), tcp_max_connections,
                                upstream_max_in_flight);
}

ServeConfig with_descriptor_budget(const ServeConfig& config, unsigned worker_index) {
  // DoT and DoH connections are pools of tcp.max_connections of their own (tcp_server.hpp,
  // doh_server.hpp): each is budgeted.
  const unsigned pools = 1 + (config.tls.enabled() ? 1 : 0) + (config.https.enabled() ? 1 : 0);
  const DescriptorBudget b = current_descriptor_budget(pools * config.tcp_max_connections, config.upstream_max_in_flight);
  if (worker_index != 0)
    spdlog::debug("worker {}: descriptors: {}", worker_index, b.describe());
  else if (b.too_small)
    spdlog::warn("descriptors per worker: {}: the limit cannot hold tcp.max_connections and {} upstream queries; "
                 "raise RLIMIT_NOFILE (LimitNOFILE=) or lower them",
                 b.describe(), std::min(kMinUpstream, b.upstream_configured));
  else
    spdlog::info("descriptors per worker: {}", b.describe());
  ServeConfig capped = config;
  capped.tcp_max_connections = std::max(1u, b.tcp / pools);
  capped.upstream_max_in_flight = b.upstream;
  return capped;
}

}  // namespace dnsarena::workers

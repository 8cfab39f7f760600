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

StreamPools split_stream_budget(const StreamPools& configured, unsigned budget) {
  const std::uint64_t total = std::uint64_t{configured.tcp} + configured.tls + configured.https;
  if (budget >= total) return configured;
  // Each pool in proportion to its configured size, at least one connection when it listens.
  auto share = [&](unsigned pool) -> unsigned {
    if (pool == 0) return 0;
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::uint64_t{pool} * budget / total));
  };
  return StreamPools{share(configured.tcp), share(configured.tls), share(configured.https)};
}

ServeConfig with_descriptor_budget(const ServeConfig& config, unsigned worker_index) {
  // DoT and DoH connections are pools of their own (tcp_server.hpp, doh_server.hpp), each
  // with its bound: all are budgeted.
  const StreamPools configured{config.tcp_max_connections,
                               config.tls.enabled() ? config.tls_max_connections() : 0,
                               config.https.enabled() ? config.https_max_connections() : 0};
  // The recursive resolver's sockets (recursive_client.hpp) come out of the upstream share.
  const unsigned recursive = config.recursion.enabled ? config.recursion.max_in_flight : 0;
  const DescriptorBudget b = current_descriptor_budget(configured.tcp + configured.tls + configured.https,
                                                       config.upstream_max_in_flight + recursive);
  const StreamPools pools = split_stream_budget(configured, b.tcp);
  // With DoT or DoH, "TCP N" is the three pools together; the split follows it.
  std::string said = b.describe();
  if (configured.tls || configured.https) {
    said += "; connections: plain " + std::to_string(pools.tcp);
    if (configured.tls) said += ", DoT " + std::to_string(pools.tls);
    if (configured.https) said += ", DoH " + std::to_string(pools.https);
  }
  if (worker_index != 0)
    spdlog::debug("worker {}: descriptors: {}", worker_index, said);
  else if (b.too_small)
    spdlog::warn("descriptors per worker: {}: the limit cannot hold the connection bounds (tcp, tls, "
                 "https.max_connections) and {} upstream queries; raise RLIMIT_NOFILE (LimitNOFILE=) or lower them",
                 said, std::min(kMinUpstream, b.upstream_configured));
  else
    spdlog::info("descriptors per worker: {}", said);
  ServeConfig capped = config;
  capped.tcp_max_connections = std::max(1u, pools.tcp);
  if (configured.tls) capped.tls.max_connections = std::max(1u, pools.tls);
  if (configured.https) capped.https.max_connections = std::max(1u, pools.https);
  capped.upstream_max_in_flight = b.upstream;
  if (recursive) {  // the share split in proportion to the two bounds
    capped.recursion.max_in_flight = std::max<unsigned>(
        1, static_cast<unsigned>(std::uint64_t{b.upstream} * recursive / (config.upstream_max_in_flight + recursive)));
    capped.upstream_max_in_flight = std::max(1u, b.upstream - std::min(b.upstream, capped.recursion.max_in_flight));
  }
  return capped;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// How one worker shares out its file descriptors. RLIMIT_NOFILE is per process and each
// worker has its own descriptor table, so the budget is per worker:
//
//   limit     RLIMIT_NOFILE's soft limit, read at worker start (the supervisor has raised
//             it to min(hard limit, 65,536) before forking)
//   fixed     what the worker has open at start, as counted then (stdio, log files, per
//             listen address its UDP socket and the TCP listener, epoll, the heartbeat
//             pipe: each address listed adds two) + kDescriptorMargin for what it opens
//             outside the two budgets below (a connection accepted before the
//             longest-idle one is closed to make room, a log reopened, the idle tick's
//             timerfd: idle_tick.hpp)
//   tcp       stream client connections: tcp.max_connections, plus tls.max_connections
//             and https.max_connections when DoT and DoH listen (each a pool of its own)
//   upstream  upstream sockets: one per query in flight (a TCP retry replaces the UDP
//             socket), probe and trial, plus the UDP sockets of earlier attempts kept
//             for late replies (upstream_late_replies.cpp), which count against the
//             same bound and give way to a new query first: what is left, capped by
//             upstream_max_in_flight (+ recursion.max_in_flight with recursion on: the
//             recursive resolver's sockets, one per resolution, share it in proportion to
//             the two bounds)
//
// So a flood of misses to an upstream that never answers can take the upstream budget
// and no more (upstream_client.hpp: the oldest query is then given up, or the new miss
// refused), and TCP clients and the listeners keep their descriptors. Example: limit
// 1,024, 10 open at start, tcp.max_connections 256: upstream gets 1,024 - 42 - 256 = 726
// (of 1,024 configured).
//
// Too small: when what is left for upstream queries is under min(kMinUpstream,
// upstream_max_in_flight), the limit cannot hold the configured TCP connections and a
// useful number of upstream queries. The worker then says so (warning, with the numbers)
// and splits what is above `fixed` in half: tcp = min(the pools, half), the rest to
// upstream (capped as above), at least one each, so stream clients still get in; what the
// upstream cap leaves of its half goes to the pools as well, which then share it in
// proportion to their configured bounds (limit 20,000 with DoT, tcp.max_connections and
// tls.max_connections 10,000 each: pools 18,930 = 2 x 9,465, upstream 1,024; with
// tcp.max_connections 256 instead, all of it fits: 256 + 10,000).
#pragma once
#include <sys/resource.h>

#include <cstdint>
#include <string>

#include "workers/serve_config.hpp"

namespace dnsarena::workers {

inline constexpr unsigned kDescriptorMargin = 32;
inline constexpr unsigned kMinUpstream = 64;

struct DescriptorBudget {
  std::uint64_t limit = 0;      // RLIMIT_NOFILE soft limit (RLIM_INFINITY taken as 2^30)
  unsigned open_at_start = 0;   // descriptors open when the budget was made
  unsigned fixed = 0;           // open_at_start + kDescriptorMargin
  unsigned tcp = 0;             // TCP client connections (tcp.max_connections or less)
  unsigned upstream = 0;        // upstream queries in flight (upstream_max_in_flight or less)
  unsigned tcp_configured = 0;
  unsigned upstream_configured = 0;
  bool too_small = false;       // the limit could not hold the configured split
  // One line: "limit 1024: 10 open + 32 margin, TCP 256, upstream 726 (of 1024 configured)".
  std::string describe() const;
};

// The split for a worker with `open_now` descriptors open under `limit` (pure: the unit
// tests call it with any numbers).
DescriptorBudget plan_descriptor_budget(rlim_t limit, unsigned open_now, unsigned tcp_max_connections,
                                        unsigned upstream_max_in_flight);

// The connection bound of each stream pool: plain TCP, DoT, DoH (0: not listening).
struct StreamPools {
  unsigned tcp = 0;
  unsigned tls = 0;
  unsigned https = 0;
};

// `configured` shrunk to fit `budget` connections in all: unchanged when they fit, else
// each listening pool in proportion to its bound, at least 1 (pure: unit-tested).
StreamPools split_stream_budget(const StreamPools& configured, unsigned budget);

// The split for this process now: RLIMIT_NOFILE and the descriptors open
// (common/process_limits.hpp).
DescriptorBudget current_descriptor_budget(unsigned tcp_max_connections, unsigned upstream_max_in_flight);

// `config` with the three connection bounds and upstream_max_in_flight capped by this process's
// budget, for worker `worker_index` at its start. Worker 0 logs the split ("descriptors
// per worker: ..."; a warning with the numbers when the limit is too small), the others
// at debug level: every worker finds the same.
ServeConfig with_descriptor_budget(const ServeConfig& config, unsigned worker_index);

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// Many clients asking one name at the same moment: `clients` UDP sockets (each its own
// source port on 127.0.0.1) are opened first, then each sends one query for the same
// name and type back to back, and the replies are collected until every client has one
// or `timeout` has passed. What `bench outage` uses to see whether a resolver sends one
// upstream query for a name that many clients want at once.
#pragma once
#include <chrono>
#include <cstdint>
#include <span>

namespace dnsarena::bench {

struct BurstResult {
  std::uint64_t sent = 0, answered = 0, noerror = 0, servfail = 0, other = 0;
  double send_ms = 0;           // first to last send
  double latency_ms_p50 = 0, latency_ms_max = 0;
};

// Throws std::runtime_error when a socket cannot be opened (raise RLIMIT_NOFILE first).
BurstResult run_burst(std::uint16_t port, std::span<const std::uint8_t> qname, std::uint16_t qtype, unsigned clients,
                      std::chrono::milliseconds timeout);

}  // namespace dnsarena::bench

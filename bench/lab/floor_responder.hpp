// SPDX-License-Identifier: GPL-3.0-or-later
// The floor of `dnsarena-lab bench serve`: a DNS responder that does nothing but answer.
// Every query comes back as its own response (the same bytes with QR set), over UDP and
// over TCP (RFC 1035 4.2.2 framing) on one address:port, from one thread. No cache, no
// parsing past the 12-byte header, no TLS: what a query costs the kernel and an event loop
// alone, with the system calls a server cannot do without:
//   UDP  per wakeup: epoll_wait, one recvmmsg (up to kFloorBatch datagrams, non-blocking),
//        one sendmmsg with their answers.
//   TCP  per wakeup: epoll_wait, one recv of up to 64 KiB, one send of every complete
//        message in it. Epoll is level-triggered: what one recv leaves is reported again.
// A server that answers each query when it comes cannot cost less per query at the same
// rate on the same machine; bench serve measures it beside the real servers in one run.
//
// Bounds (it listens on loopback for a benchmark, yet input is input): datagrams shorter
// than a header are dropped; at most kFloorMaxConnections TCP connections (past it, new
// ones are closed at once); a connection's unframed input is at most one message (65,537
// bytes); a connection whose answers the socket does not take at once (a client that does
// not read) is closed, as is one that sends a message shorter than a header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace dnsarena::bench {

inline constexpr std::size_t kFloorBatch = 64;
inline constexpr std::size_t kFloorMaxConnections = 1024;

struct FloorCounters {
  std::uint64_t udp_answers = 0, tcp_answers = 0, dropped = 0, connections_closed = 0;
};

// Binds UDP and TCP on `address`:`port` (IPv4 or IPv6 literal) and answers until SIGINT or
// SIGTERM. Throws std::runtime_error (with the reason) when it cannot bind.
FloorCounters run_floor_responder(const std::string& address, std::uint16_t port);

}  // namespace dnsarena::bench

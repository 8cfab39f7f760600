// SPDX-License-Identifier: GPL-3.0-or-later
// The floor of `dnsarena-lab bench recursive`: what a cold resolution costs when the
// zone's servers are known and nothing else is done, the system calls and wakeups every
// resolver here pays per resolution:
//   a client's query   one wakeup, one recvfrom
//   the query out      a new UDP socket (its own random source port, as serve, Unbound
//                      and Knot Resolver use one per query), connect to the zone's server,
//                      send (the client's bytes, RD clear, a fresh ID), epoll_ctl ADD
//   the reply          one wakeup, one recv, close (which leaves the epoll set), one
//                      sendto to the client with the client's ID
// No cache, no parsing past the question name (its zone picks the server: the longest
// route that is a suffix of it, else the default), no validation of the reply beyond its
// ID, no 0x20, no timers. A resolver that resolves each cold name by one query to a known
// server cannot cost less on the same machine; bench recursive measures it beside them.
//
// Bounds (input is input, even on loopback): a datagram shorter than a header or with a
// malformed name is dropped; at most kFloorResolverInFlight queries out (past it, a
// client's query is dropped); a reply whose ID is not the query's is dropped and the
// query stays out.
#pragma once
#include <netinet/in.h>

#include <cstddef>
#include <string>
#include <vector>

namespace dnsarena::bench {

inline constexpr std::size_t kFloorResolverInFlight = 1024;

struct FloorRoute {
  std::string zone;  // "example.com." (lowercase, trailing dot)
  sockaddr_in server{};
};

// Answers client queries on `listen_fd` (a bound UDP socket) until killed, sending each
// to the server of its zone in `routes` (else `fallback`). Returns only when epoll fails.
void run_floor_resolver(int listen_fd, const std::vector<FloorRoute>& routes, const sockaddr_in& fallback);

}  // namespace dnsarena::bench

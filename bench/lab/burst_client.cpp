// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/burst_client.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/loopback.hpp"
#include "dns/query_builder.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Closes every socket on every path.
struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) ::close(fd);
  }
};

}  // namespace

BurstResult run_burst(std::uint16_t port, std::span<const std::uint8_t> qname, std::uint16_t qtype, unsigned clients,
                      std::chrono::milliseconds timeout) {
  Sockets socks;
  std::vector<pollfd> pfds;
  const sockaddr_in server = common::loopback_v4(port);
  for (unsigned c = 0; c < clients; ++c) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("burst: socket " + std::to_string(c) + ": " + std::strerror(errno));
    socks.fds.push_back(fd);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0)
      throw std::runtime_error(std::string("burst: connect: ") + std::strerror(errno));
    pfds.push_back({fd, POLLIN, 0});
  }
  // Client c's query has ID c (every client its own socket: IDs need not differ, but it
  // makes a reply's owner checkable).
  std::vector<Clock::time_point> sent_at(clients);
  std::vector<bool> waiting(clients, false);
  BurstResult r;
  const auto t0 = Clock::now();
  for (unsigned c = 0; c < clients; ++c) {
    const common::Bytes q =
        dns::build_query({.id = static_cast<std::uint16_t>(c), .qname = qname, .qtype = qtype, .edns = true});
    sent_at[c] = Clock::now();
    if (::send(socks.fds[c], q.data(), q.size(), 0) == static_cast<ssize_t>(q.size())) {
      waiting[c] = true;
      ++r.sent;
    }
  }
  r.send_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::vector<double> latencies;
  std::uint8_t buf[4096];
  const auto deadline = Clock::now() + timeout;
  while (r.answered < r.sent && Clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(pfds.data(), pfds.size(), static_cast<int>(std::clamp<long long>(left, 1, 50))) <= 0) continue;
    for (unsigned c = 0; c < clients; ++c) {
      if (!(pfds[c].revents & POLLIN)) continue;
      const ssize_t n = ::recv(socks.fds[c], buf, sizeof buf, 0);
      if (n < 12 || !waiting[c] || ((buf[0] << 8) | buf[1]) != static_cast<int>(c & 0xFFFF) || !(buf[2] & 0x80))
        continue;
      waiting[c] = false;
      ++r.answered;
      latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent_at[c]).count());
      switch (buf[3] & 0x0F) {
        case 0: ++r.noerror; break;
        case 2: ++r.servfail; break;
        default: ++r.other; break;
      }
    }
  }
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    r.latency_ms_p50 = latencies[latencies.size() / 2];
    r.latency_ms_max = latencies.back();
  }
  return r;
}

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/floor_resolver.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "wire/dns_name.hpp"

namespace dnsarena::bench {

namespace {

struct Out {
  int fd = -1;
  sockaddr_in client{};
  std::uint8_t client_id[2]{};
  std::uint8_t id[2]{};
};

// The length of the wire name at msg[12..n), 0 when it is malformed (or compressed).
std::size_t question_name_length(const std::uint8_t* msg, std::size_t n) {
  std::size_t at = 12;
  while (at < n) {
    const std::uint8_t label = msg[at];
    if (label == 0) return at + 1 - 12;
    if (label > 63) return 0;
    at += std::size_t{label} + 1;
  }
  return 0;
}

bool equal_ci(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(a[i]) != std::tolower(b[i])) return false;
  return true;
}

}  // namespace

void run_floor_resolver(int listen_fd, const std::vector<FloorRoute>& routes, const sockaddr_in& fallback) {
  std::vector<std::pair<std::basic_string<std::uint8_t>, sockaddr_in>> wire_routes;
  for (const FloorRoute& r : routes) wire_routes.emplace_back(wire::name_to_wire(r.zone), r.server);
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) != 0) return;
  std::unordered_map<std::uint64_t, Out> out;
  std::uint64_t next_token = 1;
  std::uint8_t buf[65535];
  epoll_event events[64];
  for (;;) {
    const int n = ::epoll_wait(ep, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t token = events[i].data.u64;
      if (token == 0) {  // a client's query
        sockaddr_in client{};
        socklen_t len = sizeof client;
        const ssize_t got =
            ::recvfrom(listen_fd, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&client), &len);
        if (got < 12 || out.size() >= kFloorResolverInFlight) continue;
        const std::size_t name_len = question_name_length(buf, static_cast<std::size_t>(got));
        if (name_len == 0) continue;
        // The longest route whose zone ends the name (label by label), else the fallback.
        const sockaddr_in* server = &fallback;
        std::size_t best = 0;
        for (std::size_t at = 12; buf[at] != 0; at += std::size_t{buf[at]} + 1) {
          const std::size_t rest = 12 + name_len - at;
          for (const auto& [zone, addr] : wire_routes)
            if (zone.size() == rest && rest > best && equal_ci(buf + at, zone.data(), rest)) {
              server = &addr;
              best = rest;
            }
        }
        Out o;
        o.client = client;
        std::memcpy(o.client_id, buf, 2);
        ::arc4random_buf(o.id, 2);
        std::memcpy(buf, o.id, 2);
        buf[2] &= static_cast<std::uint8_t>(~0x01);  // RD clear: an iterative query
        o.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (o.fd < 0) continue;
        epoll_event up{};
        up.events = EPOLLIN;
        up.data.u64 = next_token;
        if (::connect(o.fd, reinterpret_cast<const sockaddr*>(server), sizeof *server) != 0 ||
            ::send(o.fd, buf, static_cast<std::size_t>(got), 0) != got || ::epoll_ctl(ep, EPOLL_CTL_ADD, o.fd, &up) != 0) {
          ::close(o.fd);
          continue;
        }
        out.emplace(next_token++, o);
        continue;
      }
      const auto it = out.find(token);  // a reply
      if (it == out.end()) continue;
      const ssize_t got = ::recv(it->second.fd, buf, sizeof buf, 0);
      if (got >= 12 && std::memcmp(buf, it->second.id, 2) != 0) continue;  // not its reply: it stays out
      ::close(it->second.fd);
      if (got >= 12) {
        std::memcpy(buf, it->second.client_id, 2);
        ::sendto(listen_fd, buf, static_cast<std::size_t>(got), 0, reinterpret_cast<const sockaddr*>(&it->second.client),
                 sizeof it->second.client);
      }
      out.erase(it);
    }
  }
}

}  // namespace dnsarena::bench

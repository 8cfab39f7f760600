// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/delaying_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnsarena::bench {

namespace {

sockaddr_in address_of(const std::string& ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) throw std::runtime_error("not an IPv4 address: " + ip);
  return a;
}

struct Held {
  std::vector<std::uint8_t> query;
  sockaddr_in client{};
  std::chrono::steady_clock::time_point due;  // when it is passed on, then when it is forgotten
  int upstream_fd = -1;                       // -1: still held
};

}  // namespace

DelayingRelay::DelayingRelay(const std::string& listen_ip, const std::string& server_ip, std::chrono::milliseconds delay,
                             std::uint16_t listen_port, std::uint16_t server_port)
    : server_ip_(server_ip), server_port_(server_port), delay_(delay) {
  const sockaddr_in a = address_of(listen_ip, listen_port);
  address_of(server_ip, server_port);  // checked now, not in the thread
  listen_fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in bound{};
  socklen_t bound_len = sizeof bound;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error("cannot bind the slow server " + listen_ip + ":" + std::to_string(listen_port));
  }
  port_ = ntohs(bound.sin_port);
  thread_ = std::thread([this] { loop(); });
}

DelayingRelay::~DelayingRelay() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

void DelayingRelay::loop() {
  const sockaddr_in server = address_of(server_ip_, server_port_);
  std::vector<Held> held;
  std::uint8_t buf[65535];
  while (!stop_) {
    const auto now = std::chrono::steady_clock::now();
    // Pass on what is due; forget what was passed on long ago.
    for (auto it = held.begin(); it != held.end();) {
      if (it->due > now) {
        ++it;
        continue;
      }
      if (it->upstream_fd >= 0) {
        ::close(it->upstream_fd);
        it = held.erase(it);
        continue;
      }
      it->upstream_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (it->upstream_fd >= 0 && ::connect(it->upstream_fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) == 0)
        ::send(it->upstream_fd, it->query.data(), it->query.size(), 0);
      it->due = now + std::chrono::seconds(2);
      ++it;
    }
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    int timeout_ms = 50;  // stop_ is looked at this often
    for (const Held& h : held) {
      if (h.upstream_fd >= 0) fds.push_back({h.upstream_fd, POLLIN, 0});
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(h.due - now).count();
      if (wait < timeout_ms) timeout_ms = wait < 0 ? 0 : static_cast<int>(wait);
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      sockaddr_in client{};
      socklen_t len = sizeof client;
      const ssize_t n = ::recvfrom(listen_fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&client), &len);
      if (n >= 12 && held.size() < kRelayInFlight)
        held.push_back({std::vector<std::uint8_t>(buf, buf + n), client, std::chrono::steady_clock::now() + delay_, -1});
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      for (auto it = held.begin(); it != held.end(); ++it)
        if (it->upstream_fd == fds[i].fd) {
          if (n > 0)
            ::sendto(listen_fd_, buf, static_cast<std::size_t>(n), 0, reinterpret_cast<const sockaddr*>(&it->client),
                     sizeof it->client);
          ::close(it->upstream_fd);
          held.erase(it);
          break;
        }
    }
  }
  for (const Held& h : held)
    if (h.upstream_fd >= 0) ::close(h.upstream_fd);
}

}  // namespace dnsarena::bench

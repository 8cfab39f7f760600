// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/blocking_exchange.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>


namespace dnsarena::dns {

namespace {

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

// The question's end in `query` (header + name + type + class), 0 when malformed.
std::size_t question_end(std::span<const std::uint8_t> m) {
  std::size_t at = 12;
  while (at < m.size() && m[at] != 0) {
    if (m[at] >= 0x40) return 0;
    at += m[at] + 1u;
  }
  at += 5;
  return at <= m.size() ? at : 0;
}

bool matches(std::span<const std::uint8_t> query, std::span<const std::uint8_t> reply) {
  const std::size_t q_end = question_end(query);
  if (q_end == 0 || reply.size() < q_end || reply[0] != query[0] || reply[1] != query[1] || !(reply[2] & 0x80))
    return false;
  return std::memcmp(reply.data() + 12, query.data() + 12, q_end - 12) == 0;
}

bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
  const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
  return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, 16) == 0;
}

Exchange over_tcp(const sockaddr_storage& server, socklen_t len, std::span<const std::uint8_t> query,
                  std::chrono::milliseconds timeout) {
  Exchange x;
  x.tcp = true;
  Fd fd(::socket(server.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return {{}, true, std::string("socket: ") + std::strerror(errno)};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server), len) != 0 && errno != EINPROGRESS)
    return {{}, true, std::string("TCP connect: ") + std::strerror(errno)};
  if (!wait_for(fd.get(), POLLOUT, deadline)) return {{}, true, "TCP connect: timed out"};
  int err = 0;
  socklen_t el = sizeof err;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &el);
  if (err != 0) return {{}, true, std::string("TCP connect: ") + std::strerror(err)};
  common::Bytes out(2 + query.size(), 0);
  out[0] = static_cast<std::uint8_t>(query.size() >> 8);
  out[1] = static_cast<std::uint8_t>(query.size());
  std::memcpy(out.data() + 2, query.data(), query.size());
  if (::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size()))
    return {{}, true, "TCP send failed"};
  common::Bytes in;
  std::size_t want = 2;
  while (in.size() < want) {
    if (!wait_for(fd.get(), POLLIN, deadline)) return {{}, true, "TCP reply: timed out"};
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) return {{}, true, "TCP reply: connection closed"};
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return {{}, true, std::string("TCP reply: ") + std::strerror(errno)};
    }
    in.insert(in.end(), buf, buf + n);
    if (want == 2 && in.size() >= 2) want = 2 + ((in[0] << 8) | in[1]);
  }
  x.reply.assign(in.begin() + 2, in.begin() + static_cast<std::ptrdiff_t>(want));
  if (!matches(query, x.reply)) return {{}, true, "TCP reply does not match the query"};
  return x;
}

}  // namespace

Exchange exchange_blocking(const sockaddr_storage& server, socklen_t server_len, std::span<const std::uint8_t> query,
                           std::chrono::milliseconds timeout, unsigned udp_attempts) {
  if (question_end(query) == 0) return {{}, false, "the query is malformed"};
  Fd fd(::socket(server.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return {{}, false, std::string("socket: ") + std::strerror(errno)};
  std::string last = "no reply";
  for (unsigned attempt = 0; attempt < udp_attempts; ++attempt) {
    if (::sendto(fd.get(), query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&server), server_len) < 0) {
      last = std::string("send: ") + std::strerror(errno);
      continue;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (wait_for(fd.get(), POLLIN, deadline)) {
      std::uint8_t buf[65535];
      sockaddr_storage from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = ::recvfrom(fd.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == ECONNREFUSED) {
          last = "connection refused";
          break;
        }
        last = std::string("receive: ") + std::strerror(errno);
        break;
      }
      const std::span<const std::uint8_t> reply(buf, static_cast<std::size_t>(n));
      if (!same_address(from, server) || !matches(query, reply)) continue;  // not the answer
      if (reply[2] & 0x02) return over_tcp(server, server_len, query, timeout);  // TC
      return {common::Bytes(reply.begin(), reply.end()), false, {}};
    }
    if (last == "no reply") last = "no reply within " + std::to_string(timeout.count()) + " ms";
  }
  return {{}, false, last + " (" + std::to_string(udp_attempts) + " UDP attempts)"};
}

}  // namespace dnsarena::dns

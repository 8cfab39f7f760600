// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/floor_responder.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "bench/lab/lab_interrupt.hpp"
#include "common/ip_address.hpp"

namespace dnsarena::bench {

namespace {

constexpr std::size_t kHeader = 12;          // a DNS header: shorter is not a query
constexpr std::size_t kMaxFramed = 2 + 65535;  // one TCP message with its length
constexpr std::size_t kTcpRead = 64 * 1024;

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

int bound_socket(const sockaddr_storage& at, socklen_t len, int type) {
  const int fd = ::socket(at.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int one = 1;  // TCP only: UDP with SO_REUSEADDR would share the port with another floor
  if (type == SOCK_STREAM) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&at), len) != 0 || (type == SOCK_STREAM && ::listen(fd, 1024) != 0)) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string(type == SOCK_STREAM ? "TCP" : "UDP") + " bind: " + std::strerror(e));
  }
  return fd;
}

// The answer to a query: the same bytes, QR set.
void answer_in_place(std::uint8_t* msg) { msg[2] |= 0x80; }

class Floor {
public:
  Floor(int udp, int tcp, int epoll_fd) : udp_(udp), tcp_(tcp), ep_(epoll_fd) {
    for (std::size_t i = 0; i < kFloorBatch; ++i) {
      iov_[i] = {datagrams_[i].data(), datagrams_[i].size()};
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
      msgs_[i].msg_hdr.msg_name = &peers_[i];
      msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
  }

  void on_udp() {
    const int n = ::recvmmsg(udp_, msgs_.data(), kFloorBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;
    std::array<mmsghdr, kFloorBatch> out{};
    unsigned answers = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      if (msgs_[i].msg_len >= kHeader) {
        answer_in_place(datagrams_[i].data());
        iov_[i].iov_len = msgs_[i].msg_len;
        out[answers++].msg_hdr = msgs_[i].msg_hdr;
      } else {
        ++counters.dropped;
      }
    }
    if (const int sent = answers ? ::sendmmsg(udp_, out.data(), answers, MSG_DONTWAIT) : 0; sent > 0)
      counters.udp_answers += static_cast<unsigned>(sent);
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {  // ready for the next recvmmsg
      iov_[i].iov_len = datagrams_[i].size();
      msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
  }

  void on_accept() {
    const int fd = ::accept4(tcp_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (conns_.size() >= kFloorMaxConnections) {
      ::close(fd);
      ++counters.connections_closed;
      return;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      return;
    }
    conns_[fd];
  }

  // The connection's unframed bytes, then one recv after them; complete messages are
  // answered in place and written with one send; an incomplete tail is kept.
  void on_connection(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    std::vector<std::uint8_t>& rest = it->second;
    const std::size_t had = rest.size();  // < kMaxFramed: less than one message
    if (had) std::memcpy(stream_.data(), rest.data(), had);  // an empty vector's data() may be null
    const ssize_t r = ::recv(fd, stream_.data() + had, kTcpRead, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (r <= 0) {
      close(fd);
      return;
    }
    const std::size_t size = had + static_cast<std::size_t>(r);
    std::size_t off = 0;
    while (size - off >= 2) {
      const std::size_t len = std::size_t{stream_[off]} << 8 | stream_[off + 1];
      if (size - off - 2 < len) break;
      if (len < kHeader) {
        ++counters.dropped;
        close(fd);
        return;
      }
      answer_in_place(stream_.data() + off + 2);
      off += 2 + len;
      ++counters.tcp_answers;
    }
    if (off > 0 && ::send(fd, stream_.data(), off, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(off)) {
      close(fd);  // the client does not read what it asked for: queueing for it is not the floor's cost
      return;
    }
    rest.assign(stream_.begin() + static_cast<long>(off), stream_.begin() + static_cast<long>(size));
  }

  void close_all() {
    for (const auto& [fd, in] : conns_) ::close(fd);
    conns_.clear();
  }

  FloorCounters counters;

private:
  void close(int fd) {
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(fd);
    ++counters.connections_closed;
  }

  int udp_, tcp_, ep_;
  std::array<std::array<std::uint8_t, 65536>, kFloorBatch> datagrams_{};
  std::array<sockaddr_storage, kFloorBatch> peers_{};
  std::array<iovec, kFloorBatch> iov_{};
  std::array<mmsghdr, kFloorBatch> msgs_{};
  std::array<std::uint8_t, kMaxFramed + kTcpRead> stream_{};  // a connection's bytes while handled
  std::unordered_map<int, std::vector<std::uint8_t>> conns_;  // fd -> input not yet framed
};

}  // namespace

FloorCounters run_floor_responder(const std::string& address, std::uint16_t port) {
  sockaddr_storage at{};
  const socklen_t len = common::ip_socket_address(address, port, at);
  if (len == 0) throw std::runtime_error("not an IPv4 or IPv6 address: " + address);
  const Fd udp(bound_socket(at, len, SOCK_DGRAM));
  const Fd tcp(bound_socket(at, len, SOCK_STREAM));
  const Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (ep.fd < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  for (const int fd : {udp.fd, tcp.fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep.fd, EPOLL_CTL_ADD, fd, &ev) != 0)
      throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  install_lab_interrupt();
  auto floor = std::make_unique<Floor>(udp.fd, tcp.fd, ep.fd);  // its buffers are 4 MiB: not on the stack
  std::array<epoll_event, 64> events{};
  while (!g_lab_interrupted) {
    const int n = ::epoll_wait(ep.fd, events.data(), static_cast<int>(events.size()), -1);
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == udp.fd) floor->on_udp();
      else if (fd == tcp.fd) floor->on_accept();
      else floor->on_connection(fd);
    }
  }
  floor->close_all();
  return floor->counters;
}

}  // namespace dnsarena::bench

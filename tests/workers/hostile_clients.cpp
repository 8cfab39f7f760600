// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/hostile_clients.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/loopback.hpp"
#include "common/proc_stats.hpp"

namespace dnsarena::test {

TempConfig::TempConfig(const std::string& body) {
  static int n = 0;
  path_ = "/tmp/dnsarena-hostile-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".yaml";
  std::ofstream f(path_);
  f << body;
  if (!f) throw std::runtime_error("cannot write " + path_);
}

TempConfig::~TempConfig() { std::remove(path_.c_str()); }

int tcp_connect_from(const std::string& source, std::uint16_t port, int rcvbuf) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  if (::inet_pton(AF_INET, source.c_str(), &src.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in dst = common::loopback_v4(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {  // blocking: loopback is instant
    ::close(fd);
    return -1;
  }
  const int fl = 1;
  ::ioctl(fd, FIONBIO, &fl);
  return fd;
}

std::vector<std::uint8_t> tcp_framed(const std::vector<std::uint8_t>& msg) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(msg.size() >> 8), static_cast<std::uint8_t>(msg.size())};
  out.insert(out.end(), msg.begin(), msg.end());
  return out;
}

bool closed_by_peer(int fd, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, static_cast<int>(left)) != 1) continue;
    if (p.revents & (POLLERR | POLLHUP)) return true;
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

bool raw_udp_send(std::uint16_t src_port, std::uint16_t dst_port, const std::vector<std::uint8_t>& payload) {
  const int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return false;
  std::vector<std::uint8_t> dgram(sizeof(udphdr) + payload.size());
  udphdr h{};
  h.source = htons(src_port);
  h.dest = htons(dst_port);
  h.len = htons(static_cast<std::uint16_t>(dgram.size()));
  h.check = 0;  // IPv4: no checksum
  std::memcpy(dgram.data(), &h, sizeof h);
  std::memcpy(dgram.data() + sizeof h, payload.data(), payload.size());
  sockaddr_in dst = common::loopback_v4(dst_port);
  dst.sin_port = 0;  // raw sockets take no port
  const bool ok = ::sendto(fd, dgram.data(), dgram.size(), 0, reinterpret_cast<sockaddr*>(&dst), sizeof dst) ==
                  static_cast<ssize_t>(dgram.size());
  ::close(fd);
  return ok;
}

std::uint64_t vm_rss_kib(pid_t pid) { return common::status_kib(pid, "VmRSS"); }

std::uint64_t cpu_ticks(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close_paren = all.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream rest(all.substr(close_paren + 2));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

unsigned open_fds(pid_t pid) { return common::open_fds(pid); }

std::uint64_t nofile_soft_limit(pid_t pid) { return common::nofile_soft_limit(pid); }

}  // namespace dnsarena::test

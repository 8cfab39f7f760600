// SPDX-License-Identifier: GPL-3.0-or-later
#include "loopback.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <utility>
#include <set>
#include <stdexcept>

namespace dnsarena::common {

namespace {

// The reservations of this process (see free_loopback_port in loopback.hpp).
class PortReservations {
public:
  // True when `port` is now reserved for this process: not handed out by this process
  // before, and its byte of the lock file locked (or the file unusable, said once).
  bool reserve(std::uint16_t port) {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (taken_.count(port) != 0) return false;
    if (fd_ == kUnopened) fd_ = open_lock_file();
    if (fd_ >= 0) {
      struct flock l{};
      l.l_type = F_WRLCK;
      l.l_whence = SEEK_SET;
      l.l_start = port;
      l.l_len = 1;
      if (::fcntl(fd_, F_OFD_SETLK, &l) != 0) return false;  // another process holds it
    }
    taken_.insert(port);
    return true;
  }

private:
  static constexpr int kUnopened = -2;

  // Opens (creating it world-writable when absent) the one lock file of the host.
  // Without O_CREAT first: in a sticky /tmp (fs.protected_regular) even root may not
  // O_CREAT-open another user's existing file.
  static int open_lock_file() {
    int fd = ::open(kPortLockFile, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      fd = ::open(kPortLockFile, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) ::fchmod(fd, 0666);  // past the umask: every user's tests share it
      else if (errno == EEXIST) fd = ::open(kPortLockFile, O_RDWR | O_CLOEXEC);
    }
    if (fd < 0)
      std::fprintf(stderr, "dnsarena: cannot open %s (%s): test ports are not reserved across processes\n",
                   kPortLockFile, std::strerror(errno));
    return fd < 0 ? -1 : fd;
  }

  std::mutex mutex_;
  int fd_ = kUnopened;  // kept open for the process's life: closing it drops every lock
  std::set<std::uint16_t> taken_;
};

// A port the kernel picked free for UDP that TCP can bind too right now; 0 when not.
std::uint16_t probe_free_port() {
  const int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback_v4(0);
  socklen_t len = sizeof a;
  const bool bound = ::bind(u, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                     ::getsockname(u, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int t = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = bound && ::bind(t, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(t);
  ::close(u);
  return ok ? ntohs(a.sin_port) : 0;
}

// The ports the kernel hands to sockets that bind port 0 or connect unbound
// (net.ipv4.ip_local_port_range; Linux's default when it cannot be read).
std::pair<unsigned, unsigned> ephemeral_range() {
  unsigned low = 32768, high = 60999;
  if (std::FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    unsigned l = 0, h = 0;
    if (std::fscanf(f, "%u %u", &l, &h) == 2 && l <= h && h <= 65535) low = l, high = h;
    std::fclose(f);
  }
  return {low, high};
}

// Whether `port` binds on 127.0.0.1 for both UDP and TCP right now.
bool binds_udp_and_tcp(std::uint16_t port) {
  const sockaddr_in a = loopback_v4(port);
  const int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int t = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = ::bind(u, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 &&
                  ::bind(t, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(t);
  ::close(u);
  return ok;
}

// A random port below or above the ephemeral range (never below kLowestPort) that binds
// for UDP and TCP right now; 0 when it does not or there is no such port. Outside the
// ephemeral range no client socket of any process can be handed it between this probe
// and the caller's bind.
constexpr unsigned kLowestPort = 10000;
std::uint16_t probe_outside_ephemeral() {
  static std::mt19937 random(static_cast<unsigned>(::getpid()) ^ std::random_device{}());
  const auto [low, high] = ephemeral_range();
  const unsigned below = low > kLowestPort ? low - kLowestPort : 0;  // [kLowestPort, low)
  const unsigned above = 65535 - high;                               // (high, 65535]
  if (below + above == 0) return 0;
  const unsigned pick = std::uniform_int_distribution<unsigned>(0, below + above - 1)(random);
  const auto port = static_cast<std::uint16_t>(pick < below ? kLowestPort + pick : high + 1 + (pick - below));
  return binds_udp_and_tcp(port) ? port : 0;
}

}  // namespace

sockaddr_in loopback_v4(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::uint16_t free_loopback_port() {
  static PortReservations reservations;  // never destroyed before exit: its fd holds the locks
  for (int attempt = 0; attempt < 200; ++attempt)
    if (const std::uint16_t port = probe_outside_ephemeral(); port != 0 && reservations.reserve(port)) return port;
  // Every port outside the ephemeral range taken or reserved: one the kernel picks.
  for (int attempt = 0; attempt < 200; ++attempt)
    if (const std::uint16_t port = probe_free_port(); port != 0 && reservations.reserve(port)) return port;
  throw std::runtime_error("no free port on 127.0.0.1 (400 tries: none free for UDP and TCP and unreserved)");
}

}  // namespace dnsarena::common

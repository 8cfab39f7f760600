#include "loopback.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace dnsarena::common {

sockaddr_in loopback_v4(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::uint16_t free_loopback_port() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback_v4(0);
    socklen_t len = sizeof a;
    const bool bound = ::bind(u, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                       ::getsockname(u, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    const int t = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = bound && ::bind(t, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(t);
    ::close(u);
    if (ok) return ntohs(a.sin_port);
  }
  throw std::runtime_error("no free port on 127.0.0.1");
}

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
#include "listen_port_check.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "common/socket_owners.hpp"

namespace dnsarena::workers {

namespace {

// True when binding `listen` exclusively fails with EADDRINUSE.
bool bind_refused(const Endpoint& listen, bool tcp) {
  const int fd = ::socket(listen.family(), (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;  // the real bind reports what is wrong
  const int one = 1;
  // A TCP listener's TIME_WAIT connections from an earlier run are not a server.
  if (tcp) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // As the real socket (open_listen_socket): [::] asks for the IPv6 port only.
  if (listen.wildcard() && listen.family() == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  const bool refused = ::bind(fd, reinterpret_cast<const sockaddr*>(&listen.addr), listen.len) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return refused;
}

}  // namespace

std::string listen_port_taken(const Endpoint& listen, std::chrono::milliseconds grace) {
  if (listen.port() == 0) return "";  // the kernel picks a free port for each socket
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    const bool udp_taken = bind_refused(listen, false);
    const bool tcp_taken = !udp_taken && bind_refused(listen, true);
    if (!udp_taken && !tcp_taken) return "";
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string who =
          common::describe_holders(common::socket_holders(common::bound_socket_inodes(tcp_taken, listen.port())));
      return std::string(tcp_taken ? "TCP " : "UDP ") + listen.text + " is already bound by " +
             (who.empty() ? "another process" : who) +
             "; a second server on the same port would split its queries with the first (SO_REUSEPORT), so "
             "this one does not start";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace dnsarena::workers

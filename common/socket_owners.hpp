// SPDX-License-Identifier: GPL-3.0-or-later
// Which processes hold the sockets bound to a local port, read from /proc: for the
// supervisor's "port already served" refusal (workers/listen_port_check.cpp) and for
// readiness checks that must know the listener on a port is the process they started,
// not another one that happens to hold the same port (tests' ServeProcess::wait_ready).
// Linux only; what /proc does not let this process see (other users' fd tables) is
// simply not found.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace dnsarena::common {

// Inodes of the sockets bound to local port `port` in /proc/net/{udp,tcp}{,6}: every UDP
// socket, or the TCP sockets in LISTEN state.
std::set<std::string> bound_socket_inodes(bool tcp, std::uint16_t port);

struct SocketHolder {
  pid_t pid = 0;
  std::string name;  // /proc/PID/comm
};

// The processes other than this one that hold one of `inodes` (an fd on it).
std::vector<SocketHolder> socket_holders(const std::set<std::string>& inodes);

// "pid 812 (unbound), pid 9653 (dnsarena)"; "" for none.
std::string describe_holders(const std::vector<SocketHolder>& holders);

// Whether process `pid` has an fd on a TCP socket listening on local port `port`.
bool process_listens_tcp(pid_t pid, std::uint16_t port);

}  // namespace dnsarena::common

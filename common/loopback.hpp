// SPDX-License-Identifier: GPL-3.0-or-later
// IPv4 loopback addresses and free ports, for the commands and tests that start
// services on 127.0.0.1 (bench serve, sim validate, the serve and traffic tests).
#pragma once
#include <netinet/in.h>

#include <cstdint>

namespace dnsarena::common {

// 127.0.0.1:port (port in host order).
sockaddr_in loopback_v4(std::uint16_t port);

// Where free_loopback_port() keeps its reservations: one byte per port.
inline constexpr const char* kPortLockFile = "/tmp/dnsarena-ports.lock";

// A port free for both UDP and TCP on 127.0.0.1 right now, and outside the kernel's
// ephemeral range (net.ipv4.ip_local_port_range) while any port there is free: a client
// socket of another process (a test's query, a server's upstream socket) is handed
// ephemeral ports only, so it cannot take the port before the caller binds it. Reserved
// for this process: no other call of this function,
// in this process or another one on the host (test processes under `ctest -j`), returns
// it while this process lives. The reservation is an open-file-description write lock
// (fcntl F_OFD_SETLK) on byte `port` of kPortLockFile, which the kernel drops when the
// process exits, kill -9 included; nothing accumulates on disk.
// Why reserve: two test processes probing at the same time can be handed the same port
// (bind(0), close, the kernel reuses it), and one's server then answers the other's
// queries.
// Not reserved against processes that bind fixed ports themselves. When every port
// outside the ephemeral range is taken, the kernel picks one inside it (an ephemeral
// client socket may then take it first). When the lock file cannot be opened (read-only
// /tmp) ports are returned unreserved, and stderr says so once.
// Throws std::runtime_error when no port is found in 400 tries.
std::uint16_t free_loopback_port();

}  // namespace dnsarena::common

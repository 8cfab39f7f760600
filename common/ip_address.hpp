// SPDX-License-Identifier: GPL-3.0-or-later
// An IP literal and a port as a socket address, for every place that binds or connects to
// an address a user gave (serve's listen and upstream endpoints, sim upstream, sim load,
// bench floor-server).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace dnsarena::common {

// "127.0.0.1" or "::1" (no brackets, no port) and `port` (host order) into `ss`, zeroed
// first. Returns the address's length (sizeof sockaddr_in or sockaddr_in6), or 0 when
// `host` is neither an IPv4 nor an IPv6 literal; callers say which option was wrong.
socklen_t ip_socket_address(const std::string& host, std::uint16_t port, sockaddr_storage& ss);

}  // namespace dnsarena::common

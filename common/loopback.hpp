// IPv4 loopback addresses and free ports, for the commands and tests that start
// services on 127.0.0.1 (bench serve, sim validate, the serve and traffic tests).
#pragma once
#include <netinet/in.h>

#include <cstdint>

namespace dnsarena::common {

// 127.0.0.1:port (port in host order).
sockaddr_in loopback_v4(std::uint16_t port);

// A port free for both UDP and TCP on 127.0.0.1 right now (the kernel picks the UDP one;
// up to 50 tries until TCP can bind it too). Throws std::runtime_error when none is found.
std::uint16_t free_loopback_port();

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/ip_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace dnsarena::common {

socklen_t ip_socket_address(const std::string& host, std::uint16_t port, sockaddr_storage& ss) {
  ss = sockaddr_storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return sizeof(sockaddr_in);
  }
  ss = sockaddr_storage{};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return sizeof(sockaddr_in6);
  }
  ss = sockaddr_storage{};
  return 0;
}

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/subnet.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "wire/address_prefix.hpp"

namespace dnsarena::workers {

Subnet Subnet::parse(const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  Subnet s;
  if (::inet_pton(AF_INET, addr.c_str(), s.net.data()) == 1) s.family = AF_INET;
  else if (::inet_pton(AF_INET6, addr.c_str(), s.net.data()) == 1) s.family = AF_INET6;
  else throw std::invalid_argument("'" + addr + "' is not an IPv4 or IPv6 address");
  const unsigned max = s.family == AF_INET ? 32 : 128;
  unsigned prefix = max;
  if (slash != std::string::npos) {
    const std::string p = text.substr(slash + 1);
    char* end = nullptr;
    const unsigned long v = std::strtoul(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v > max || !std::isdigit(static_cast<unsigned char>(p[0])))
      throw std::invalid_argument("prefix '" + p + "' is not 0.." + std::to_string(max));
    prefix = static_cast<unsigned>(v);
  }
  s.prefix = static_cast<std::uint8_t>(prefix);
  wire::clear_bits_past_prefix(s.net, prefix);  // zero the host bits
  return s;
}

bool ip_address_of(const sockaddr_storage& source, int& family, const std::uint8_t*& addr) {
  family = source.ss_family;
  if (family == AF_INET) {
    addr = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&source)->sin_addr);
  } else if (family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&source);
    addr = a6->sin6_addr.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      family = AF_INET;
      addr += 12;
    }
  } else {
    return false;
  }
  return true;
}

bool Subnet::contains(int addr_family, const std::uint8_t* addr) const {
  if (addr_family != family) return false;
  const unsigned full = prefix / 8u, rest = prefix % 8u;
  if (std::memcmp(addr, net.data(), full) != 0) return false;
  if (rest == 0) return true;
  const std::uint8_t mask = static_cast<std::uint8_t>(0xFF00u >> rest);
  return (addr[full] & mask) == net[full];
}

}  // namespace dnsarena::workers

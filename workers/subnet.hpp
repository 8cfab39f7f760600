// SPDX-License-Identifier: GPL-3.0-or-later
// An IPv4 or IPv6 subnet as an operator writes it ("10.0.0.0/8", "fd00::/8", "::1": no
// prefix = the host), for the config's subnet lists (access_control, private_address).
//
// Costs: contains() is a masked compare of at most 16 bytes.
#pragma once
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>

namespace dnsarena::workers {

struct Subnet {
  int family = 0;                      // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> net{};  // network byte order, bits past prefix zero
  std::uint8_t prefix = 0;

  // Throws std::invalid_argument ("'ADDR' is not an IPv4 or IPv6 address", "prefix 'P'
  // is not 0..32"): the caller adds which entry it was.
  static Subnet parse(const std::string& text);
  // Whether `addr` (4 bytes for AF_INET, 16 for AF_INET6, network order) is inside.
  bool contains(int addr_family, const std::uint8_t* addr) const;
  bool operator==(const Subnet&) const = default;
};

// A socket address's IP address as Subnet::contains takes it: its family and bytes (an
// IPv4-mapped IPv6 address, ::ffff:a.b.c.d of a dual-stack socket, as the IPv4 address).
// False for another family.
bool ip_address_of(const sockaddr_storage& source, int& family, const std::uint8_t*& addr);

}  // namespace dnsarena::workers

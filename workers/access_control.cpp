// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/access_control.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

#include "wire/address_prefix.hpp"

namespace dnsarena::workers {

namespace {

bool prefix_matches(const std::uint8_t* addr, const std::array<std::uint8_t, 16>& net, unsigned prefix) {
  const unsigned full = prefix / 8, rest = prefix % 8;
  if (std::memcmp(addr, net.data(), full) != 0) return false;
  if (rest == 0) return true;
  const std::uint8_t mask = static_cast<std::uint8_t>(0xFF00u >> rest);
  return (addr[full] & mask) == net[full];
}

}  // namespace

AccessRule AccessRule::parse(const std::string& text) {
  const std::size_t space = text.find_first_of(" \t");
  if (space == std::string::npos)
    throw std::invalid_argument("'" + text + "': expected 'SUBNET ACTION' (action: allow, refuse or deny)");
  const std::string subnet = text.substr(0, space);
  std::string action = text.substr(text.find_first_not_of(" \t", space));
  while (!action.empty() && (action.back() == ' ' || action.back() == '\t')) action.pop_back();
  AccessRule r;
  if (action == "allow") r.action = AccessAction::allow;
  else if (action == "refuse") r.action = AccessAction::refuse;
  else if (action == "deny") r.action = AccessAction::deny;
  else throw std::invalid_argument("'" + text + "': unknown action '" + action + "' (allow, refuse or deny)");
  const std::size_t slash = subnet.find('/');
  const std::string addr = subnet.substr(0, slash);
  if (::inet_pton(AF_INET, addr.c_str(), r.net.data()) == 1) r.family = AF_INET;
  else if (::inet_pton(AF_INET6, addr.c_str(), r.net.data()) == 1) r.family = AF_INET6;
  else throw std::invalid_argument("'" + text + "': '" + addr + "' is not an IPv4 or IPv6 address");
  const unsigned max = r.family == AF_INET ? 32 : 128;
  unsigned prefix = max;
  if (slash != std::string::npos) {
    const std::string p = subnet.substr(slash + 1);
    char* end = nullptr;
    const unsigned long v = std::strtoul(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v > max)
      throw std::invalid_argument("'" + text + "': prefix '" + p + "' is not 0.." + std::to_string(max));
    prefix = static_cast<unsigned>(v);
  }
  r.prefix = static_cast<std::uint8_t>(prefix);
  wire::clear_bits_past_prefix(r.net, prefix);  // zero the host bits
  return r;
}

AccessControl::AccessControl() : rules_{AccessRule::parse("127.0.0.0/8 allow"), AccessRule::parse("::1 allow")} {}

AccessAction AccessControl::check(const sockaddr_storage& source) const {
  int family = source.ss_family;
  const std::uint8_t* addr = nullptr;
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
    return AccessAction::refuse;
  }
  const AccessRule* best = nullptr;
  for (const AccessRule& r : rules_)
    if (r.family == family && (!best || r.prefix > best->prefix) && prefix_matches(addr, r.net, r.prefix)) best = &r;
  return best ? best->action : AccessAction::refuse;
}

}  // namespace dnsarena::workers

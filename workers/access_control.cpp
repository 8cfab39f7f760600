// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/access_control.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>


namespace dnsarena::workers {

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
  try {
    r.subnet = Subnet::parse(subnet);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + text + "': " + e.what());
  }
  return r;
}

AccessControl::AccessControl() : rules_{AccessRule::parse("127.0.0.0/8 allow"), AccessRule::parse("::1 allow")} {}

AccessAction AccessControl::check(const sockaddr_storage& source) const {
  int family = 0;
  const std::uint8_t* addr = nullptr;
  if (!ip_address_of(source, family, addr)) return AccessAction::refuse;
  const AccessRule* best = nullptr;
  for (const AccessRule& r : rules_)
    if ((!best || r.subnet.prefix > best->subnet.prefix) && r.subnet.contains(family, addr)) best = &r;
  return best ? best->action : AccessAction::refuse;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// Who may ask: per-subnet actions on a client's source address, as Unbound's
// `access-control` (and Knot Resolver's view:addr).
//
//   action   effect
//   allow    answered
//   refuse   answered REFUSED (rcode 5), no lookup, no upstream query
//   deny     dropped without an answer
//
// Rules are "SUBNET ACTION" strings (e.g. "10.0.0.0/8 allow", "::1 allow": no prefix =
// the host). The longest matching prefix wins; an address no rule matches is refused,
// as Unbound does. Default rules (none configured): 127.0.0.0/8 and ::1 allowed, so a
// fresh install is not an open resolver. An IPv4-mapped IPv6 source is matched as IPv4.
//
// Costs: a linear scan of the rules per query (operators list a handful); the match is
// a masked compare of at most 16 bytes.
#pragma once
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "workers/subnet.hpp"

namespace dnsarena::workers {

enum class AccessAction : std::uint8_t { allow, refuse, deny };

struct AccessRule {
  Subnet subnet;
  AccessAction action = AccessAction::allow;
  // Parses "SUBNET ACTION". Throws std::invalid_argument saying what is wrong.
  static AccessRule parse(const std::string& text);
};

class AccessControl {
public:
  AccessControl();  // the default rules
  explicit AccessControl(std::vector<AccessRule> rules) : rules_(std::move(rules)) {}
  AccessAction check(const sockaddr_storage& source) const;
  const std::vector<AccessRule>& rules() const { return rules_; }

private:
  std::vector<AccessRule> rules_;
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/ecs.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace dnsarena::workers {

using dns::ClientQuery;
using dns::EcsOption;

EcsOption upstream_ecs(EcsPolicy policy, const ClientQuery& q, const sockaddr_storage& source,
                       std::uint8_t v4_prefix, std::uint8_t v6_prefix) {
  EcsOption e;
  if (policy == EcsPolicy::off) return e;
  if (q.ecs.present) {
    e = q.ecs;
    dns::cut_to_prefix(e, e.family == 1 ? v4_prefix : v6_prefix);
    return e;
  }
  e.present = true;
  if (source.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&source);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      e.family = 1;
      std::memcpy(e.address.data(), &a6->sin6_addr.s6_addr[12], 4);
    } else {
      e.family = 2;
      std::memcpy(e.address.data(), &a6->sin6_addr, 16);
    }
  } else {
    e.family = 1;
    std::memcpy(e.address.data(), &reinterpret_cast<const sockaddr_in*>(&source)->sin_addr, 4);
  }
  e.source_prefix = e.family == 1 ? 32 : 128;
  if (policy == EcsPolicy::forward) dns::cut_to_prefix(e, 0);
  else dns::cut_to_prefix(e, e.family == 1 ? v4_prefix : v6_prefix);
  return e;
}

cache::EcsTag ecs_tag(const EcsOption& sent, std::uint8_t scope) {
  cache::EcsTag t;
  if (!sent.present) return t;
  const cache::EcsFamily family = sent.family == 1 ? cache::EcsFamily::ipv4 : cache::EcsFamily::ipv6;
  if (sent.source_prefix == 0) {  // the /0 key: family set, no address bits
    t.family = family;
    return t;
  }
  if (scope == 0) return t;  // shared by every client
  t.family = family;
  t.prefix = std::min(scope, sent.source_prefix);
  t.address = sent.address;
  return t;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The recursive resolver's server selection over the host's infra table (infra_ranking.hpp).
#include "workers/infra_ranking.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"

namespace dnsarena::workers {

InfraKey infra_key(const recursion::ServerAddress& a) {
  InfraKey k;
  k.family = AF_INET;
  std::copy(a.v4.begin(), a.v4.end(), k.address.begin());
  k.port = a.port;
  return k;
}

std::uint64_t infra_zone_hash(std::span<const std::uint8_t> zone) {
  std::uint64_t h = common::fmix64(zone.size() + 0x9e3779b97f4a7c15ull);
  for (std::size_t i = 0; i < zone.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, zone.data() + i, std::min<std::size_t>(8, zone.size() - i));
    h = common::fmix64(h ^ w);
  }
  return h;
}

std::uint32_t InfraRanking::rank(const recursion::ServerAddress& a, std::span<const std::uint8_t> zone) const {
  return table_.rank(infra_key(a), infra_zone_hash(zone), common::monotonic_ms());
}

void InfraRanking::lame(const recursion::ServerAddress& a, std::span<const std::uint8_t> zone) {
  table_.mark_lame(infra_key(a), infra_zone_hash(zone), common::monotonic_ms());
}

}  // namespace dnsarena::workers

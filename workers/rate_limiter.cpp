// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rate_limiter.hpp"

#include <netinet/in.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "wire/address_prefix.hpp"

namespace dnsarena::workers {

RateLimiter::RateLimiter(const RateLimitConfig& config, RateLimitTable* shared) : cfg_(config), table_(shared) {
  if (!enabled() || table_) return;
  own_ = std::make_unique<RateLimitTable>(std::max(1u, cfg_.table_size), false);
  table_ = own_.get();
}

RateLimiter::Verdict RateLimiter::check(const sockaddr_storage& client, std::uint32_t now_seconds) {
  if (!enabled()) return Verdict::answer;
  std::uint8_t key[17] = {};
  const std::uint8_t* addr = nullptr;
  unsigned bytes = 0, prefix = 0;
  if (client.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&client);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      addr = a6->sin6_addr.s6_addr + 12;
      bytes = 4;
      prefix = cfg_.ipv4_prefix;
      key[0] = 4;
    } else {
      addr = a6->sin6_addr.s6_addr;
      bytes = 16;
      prefix = cfg_.ipv6_prefix;
      key[0] = 6;
    }
  } else {
    addr = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(&client)->sin_addr);
    bytes = 4;
    prefix = cfg_.ipv4_prefix;
    key[0] = 4;
  }
  std::memcpy(key + 1, addr, bytes);
  wire::clear_bits_past_prefix({key + 1, bytes}, prefix);
  const std::uint64_t h = XXH3_64bits_withSeed(key, sizeof key, table_->seed());
  const std::uint32_t n = table_->count(h, now_seconds);
  if (n <= cfg_.responses_per_second) return Verdict::answer;
  const std::uint32_t limited = n - cfg_.responses_per_second;  // this one included
  return cfg_.slip != 0 && limited % cfg_.slip == 0 ? Verdict::slip : Verdict::drop;
}

}  // namespace dnsarena::workers

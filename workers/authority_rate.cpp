// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/authority_rate.hpp"

#include <xxhash.h>

#include <cstring>

namespace dnsarena::workers {

AuthorityRate::AuthorityRate(RateLimitTable* host, unsigned per_second) : per_second_(per_second), table_(host) {
  if (per_second_ != 0 && !table_) {
    own_ = std::make_unique<RateLimitTable>(kBuckets, false);
    table_ = own_.get();
  }
}

bool AuthorityRate::admit(const recursion::ServerAddress& server, std::uint32_t now_s) {
  if (per_second_ == 0) return true;
  std::uint8_t key[6];
  std::memcpy(key, server.v4.data(), 4);
  key[4] = static_cast<std::uint8_t>(server.port >> 8);
  key[5] = static_cast<std::uint8_t>(server.port);
  return table_->count(XXH3_64bits_withSeed(key, sizeof key, table_->seed()), now_s) <= per_second_;
}

}  // namespace dnsarena::workers

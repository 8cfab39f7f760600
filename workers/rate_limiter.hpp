// SPDX-License-Identifier: GPL-3.0-or-later
// Response rate limiting per client subnet over UDP, as Knot DNS's RRL (rate-limit,
// rate-limit-slip) and Unbound's ip-ratelimit: a reflection attack spoofs its victim's
// address, so answers to one subnet are capped; the excess is dropped, except every
// `slip`-th one, which goes out truncated (TC, no records) so that a real client behind
// that subnet retries over TCP and is still answered.
//
// The counts live in a RateLimitTable (rate_limit_table.hpp): the supervisor's, shared by
// every worker of the host, so the rate is per host and not multiplied by the number of
// workers; or, when none is given, a private one of config.table_size buckets. A
// subnet is the client's /ipv4_prefix or /ipv6_prefix; its count covers one wall-clock
// second. The first responses_per_second answers of a second are answered; of the
// answers over the rate, every slip-th is slipped, the rest dropped. What a bucket
// collision does is said in rate_limit_table.hpp (limiting weaker, never stronger).
// Costs: one hash of 17 bytes, one CAS on one cache line per UDP answer. Off when
// responses_per_second is 0 (the default, as in Knot and Unbound).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <memory>

#include "workers/rate_limit_table.hpp"

namespace dnsarena::workers {

struct RateLimitConfig {
  unsigned responses_per_second = 0;  // per subnet and host; 0 = off
  unsigned slip = 2;                  // every slip-th limited answer is sent with TC; 0 = drop all
  std::uint8_t ipv4_prefix = 24;
  std::uint8_t ipv6_prefix = 56;
  unsigned table_size = 65536;        // buckets for the host, rounded up to a power of two
};

class RateLimiter {
public:
  enum class Verdict { answer, slip, drop };
  // `shared`: the host's table (not owned; it outlives this limiter); nullptr: a private
  // table of config.table_size buckets, made here when the limiter is enabled.
  explicit RateLimiter(const RateLimitConfig& config, RateLimitTable* shared = nullptr);
  bool enabled() const { return cfg_.responses_per_second > 0; }
  Verdict check(const sockaddr_storage& client, std::uint32_t now_seconds);

private:
  RateLimitConfig cfg_;
  std::unique_ptr<RateLimitTable> own_;
  RateLimitTable* table_ = nullptr;
};

}  // namespace dnsarena::workers

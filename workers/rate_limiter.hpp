// Response rate limiting per client subnet over UDP, as Knot DNS's RRL (rate-limit,
// rate-limit-slip) and Unbound's ip-ratelimit: a reflection attack spoofs its victim's
// address, so answers to one subnet are capped; the excess is dropped, except every
// `slip`-th one, which goes out truncated (TC, no records) so that a real client behind
// that subnet retries over TCP and is still answered.
//
// A table of `table_size` buckets (a power of two, per worker) indexed by a hash of the
// client's /ipv4_prefix or /ipv6_prefix; a bucket counts the answers of the current
// second. Two subnets hashing to one bucket share it: the later resets it for itself
// (limiting is then weaker for both, never stronger). Costs: one hash, one cache line
// per UDP answer. Off when responses_per_second is 0 (the default, as in Knot and
// Unbound).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <vector>

namespace dnsarena::workers {

struct RateLimitConfig {
  unsigned responses_per_second = 0;  // per subnet; 0 = off
  unsigned slip = 2;                  // every slip-th limited answer is sent with TC; 0 = drop all
  std::uint8_t ipv4_prefix = 24;
  std::uint8_t ipv6_prefix = 56;
  unsigned table_size = 65536;        // buckets, rounded up to a power of two
};

class RateLimiter {
public:
  enum class Verdict { answer, slip, drop };
  explicit RateLimiter(const RateLimitConfig& config);
  bool enabled() const { return cfg_.responses_per_second > 0; }
  Verdict check(const sockaddr_storage& client, std::uint32_t now_seconds);

private:
  struct Bucket {
    std::uint64_t subnet = 0;  // hash of family and masked address
    std::uint32_t second = 0;
    std::uint32_t answers = 0;
    std::uint32_t limited = 0;  // limited answers this second, for the slip count
    std::uint32_t pad = 0;
  };
  RateLimitConfig cfg_;
  std::vector<Bucket> buckets_;
  std::uint64_t mask_ = 0;
};

}  // namespace dnsarena::workers

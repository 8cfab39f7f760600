// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rate_limit_table.hpp"

#include "workers/rate_limiter.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace dnsarena::workers {

std::size_t RateLimitTable::rounded(std::size_t buckets) {
  std::size_t n = 1;
  while (n < buckets) n <<= 1;
  return n;
}

RateLimitTable::RateLimitTable(std::size_t buckets, bool shared) {
  const std::size_t n = rounded(buckets);
  map_bytes_ = sizeof(Header) + n * sizeof(std::atomic<std::uint64_t>);
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1,
                0);
  if (map_ == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "rate-limit table");
  header_ = static_cast<Header*>(map_);  // the mapping is zero-filled: every bucket empty
  std::uint64_t seed = 0;
  arc4random_buf(&seed, sizeof seed);
  header_->seed = seed;
  header_->buckets = n;
  buckets_ = reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<std::uint8_t*>(map_) + sizeof(Header));
  mask_ = n - 1;
}

RateLimitTable::~RateLimitTable() {
  if (map_) ::munmap(map_, map_bytes_);
}

std::uint32_t RateLimitTable::count(std::uint64_t subnet_hash, std::uint32_t now_seconds) {
  constexpr std::uint32_t kSecondMask = (1u << kSecondBits) - 1;
  std::atomic<std::uint64_t>& bucket = buckets_[subnet_hash & mask_];
  const auto tag = static_cast<std::uint32_t>(subnet_hash >> (64 - kTagBits));
  const std::uint32_t second = now_seconds & kSecondMask;
  const std::uint64_t fresh = pack(tag, second, 1);
  // Relaxed: the word is the whole state and a CAS on one atomic is totally ordered with
  // every other update of it; nothing else is published through it.
  std::uint64_t old = bucket.load(std::memory_order_relaxed);
  for (;;) {
    std::uint64_t next = fresh;
    if (tag_of(old) == tag) {
      const std::uint32_t ahead = (second_of(old) - second) & kSecondMask;  // bucket's window minus ours
      if (ahead <= kClockSkewSeconds) {
        const std::uint32_t n = count_of(old);
        if (n == kCountMax) return kCountMax;
        next = old + 1;  // count is the low field and below its maximum: no carry
      }
    }
    if (bucket.compare_exchange_weak(old, next, std::memory_order_relaxed, std::memory_order_relaxed))
      return count_of(next);
  }
}

std::unique_ptr<RateLimitTable> host_rate_limit_table(const RateLimitConfig& config,
                                                      std::unique_ptr<RateLimitTable> current) {
  if (config.responses_per_second == 0) return current;
  if (current && current->buckets() == RateLimitTable::rounded(config.table_size)) return current;
  return std::make_unique<RateLimitTable>(config.table_size, true);
}

}  // namespace dnsarena::workers

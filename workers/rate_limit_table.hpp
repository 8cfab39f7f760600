// SPDX-License-Identifier: GPL-3.0-or-later
// The response-rate-limit buckets of one host: every worker of one `dnsarena serve`
// counts its UDP answers per client subnet in the same table, so the configured
// rate_limit.responses_per_second holds for the host, whichever worker SO_REUSEPORT hands
// a client's datagrams to (a client's source ports spread its queries over all of them).
//
// Memory: one anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) that the supervisor
// makes before it forks the workers, which inherit it (as in_flight_names.hpp). It is not
// part of the cache segment, has no name and no version: it lives exactly as long as the
// service's processes. A table made with `shared` false is private to its process (a
// worker started without the supervisor's table, and the unit tests).
//
//   offset        size          field     meaning
//   0             8             seed      random; keys the subnet hash (below)
//   8             8             buckets   a power of two
//   16            48            (zero)    so that bucket 0 starts on a cache line
//   64 + 8*i      8             bucket i  one packed word, below
//
// A bucket word (one atomic 64-bit word; all-zero = empty):
//
//   63          42 41        26 25              0
//   |--- tag 22 ---|-- second --|---- count 26 ---|
//
//   tag     the subnet hash's top 22 bits (the low bits chose the bucket)
//   second  the window: low 16 bits of the wall-clock second it counts
//   count   answers asked for in that window by that subnet, all workers together
//           (answered and limited: the first `rate` are answered, the rest limited);
//           saturates at 2^26 - 1
//
// The subnet hash is XXH3 (seeded with `seed`) of the family and the masked address
// (rate_limiter.cpp); bucket = hash mod buckets.
//
// Concurrency: lock-free. count() reads the word, computes its successor and installs it
// with one compare-and-swap, retrying on failure (another worker counted meanwhile). Any
// number of processes may call it at once; each call is counted exactly once. A process
// killed between its load and its CAS has changed nothing, and a process killed after
// the CAS has counted its answer: there is no lock to leave held, no repair to do, and a
// restarted worker simply goes on counting.
// Windows: a caller whose clock is behind the bucket's by at most kClockSkewSeconds (its
// second read a little earlier than another worker's: a worker reads the clock once per
// wakeup) counts into the bucket's newer window instead of resetting it back; any other
// second replaces the window. Seconds are compared modulo 2^16: a bucket left untouched
// for a multiple of 2^16 s (18 h) to the second and then asked by the same subnet goes
// on counting its old window, limiting that subnet early for at most one second.
//
// Collisions: two subnets whose hashes share a bucket (different tags) take it in turn:
// each arrival of the other subnet resets the count for itself. Limiting is then weaker
// for both (each may be answered up to the rate after every reset), never stronger. Two
// subnets with the same bucket and the same tag (1 in 2^22 of colliding pairs) share one
// count: both are limited together. The seed keeps the bucket and tag of an address
// unpredictable from outside; and an attacker gains nothing from a collision, since
// spoofing the victim's own subnet has the same effect.
//
// Costs: one seeded XXH3 of 17 bytes, then one load and one CAS on one cache line per
// UDP answer. Measured (a micro-bench of RateLimiter::check, this table against the
// per-worker table of 32-byte buckets it replaced, same run): callgrind 177 instructions
// per check against 137 (+9 the seeded hash, +31 the out-of-line count and its CAS);
// timed on a loaded 2-core host, one subnet 66-72 ns against 60-64, random subnets over
// 65,536 buckets 114-131 ns against 313-365 (512 KiB of buckets instead of 2 MiB), and
// 148-175 ns with two processes counting one subnet at once (its line moves between
// cores). The mapping is 64 + 8 x buckets bytes; pages are allocated as buckets are
// first touched.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace dnsarena::workers {

struct RateLimitConfig;

class RateLimitTable {
public:
  static constexpr unsigned kTagBits = 22;
  static constexpr unsigned kSecondBits = 16;
  static constexpr unsigned kCountBits = 26;
  static constexpr std::uint32_t kCountMax = (1u << kCountBits) - 1;
  static constexpr std::uint32_t kClockSkewSeconds = 2;

  // `buckets` rounded up to a power of two (at least 1): the size of a table asked for it.
  static std::size_t rounded(std::size_t buckets);
  // A table of rounded(buckets) buckets, shared across fork() when `shared`, else
  // private to this process. Throws std::system_error when mmap fails.
  RateLimitTable(std::size_t buckets, bool shared);
  ~RateLimitTable();
  RateLimitTable(const RateLimitTable&) = delete;
  RateLimitTable& operator=(const RateLimitTable&) = delete;

  std::size_t buckets() const { return header_->buckets; }
  std::uint64_t seed() const { return header_->seed; }
  // Counts one answer for the subnet whose (seeded) hash is `subnet_hash` in the window of
  // `now_seconds` and returns that window's count including this one (1 for the first),
  // saturating at kCountMax. Lock-free; safe from any number of processes at once.
  std::uint32_t count(std::uint64_t subnet_hash, std::uint32_t now_seconds);

  // The packed bucket word (exposed for the layout test).
  static std::uint64_t pack(std::uint32_t tag, std::uint32_t second, std::uint32_t count) {
    return static_cast<std::uint64_t>(tag) << (kSecondBits + kCountBits) |
           static_cast<std::uint64_t>(second & ((1u << kSecondBits) - 1)) << kCountBits | (count & kCountMax);
  }
  static std::uint32_t tag_of(std::uint64_t word) {
    return static_cast<std::uint32_t>(word >> (kSecondBits + kCountBits));
  }
  static std::uint32_t second_of(std::uint64_t word) {
    return static_cast<std::uint32_t>(word >> kCountBits) & ((1u << kSecondBits) - 1);
  }
  static std::uint32_t count_of(std::uint64_t word) { return static_cast<std::uint32_t>(word) & kCountMax; }

  struct Header {
    std::uint64_t seed;
    std::uint64_t buckets;
    std::uint8_t zero[48];
  };

private:
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  Header* header_ = nullptr;
  std::atomic<std::uint64_t>* buckets_ = nullptr;
  std::uint64_t mask_ = 0;
};

// The table the supervisor hands its workers, at start and at each SIGHUP reload: when
// rate limiting is on, `current` if it has the configured number of buckets, else a new,
// empty shared table of that size; when it is off, `current` as it is (possibly none).
// On a reload that keeps the size the counts go on: the new workers compare the current
// second's counts with the new rate and slip, so a changed rate applies from the next
// answer, and changed prefixes make new subnets whose buckets replace the old ones as
// they are asked. A new table (a changed table_size) starts empty; a retiring worker goes
// on counting in the old one (its mapping, inherited at fork) until it exits.
std::unique_ptr<RateLimitTable> host_rate_limit_table(const RateLimitConfig& config,
                                                      std::unique_ptr<RateLimitTable> current);

static_assert(RateLimitTable::kTagBits + RateLimitTable::kSecondBits + RateLimitTable::kCountBits == 64,
              "a bucket is exactly one 64-bit word: one CAS updates tag, window and count together");
static_assert(offsetof(RateLimitTable::Header, seed) == 0 && offsetof(RateLimitTable::Header, buckets) == 8,
              "header fields at their documented offsets");
static_assert(sizeof(RateLimitTable::Header) == 64,
              "bucket 0 starts on its own cache line, 8-byte aligned for atomics");
static_assert(sizeof(std::atomic<std::uint64_t>) == 8, "a bucket is 8 bytes in the mapping");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "buckets are shared between processes: only lock-free atomics are address-free");
static_assert((1u << 24) + 1000000u < RateLimitTable::kCountMax,
              "the count holds the largest configurable rate (2^24) with room for the limited answers");

}  // namespace dnsarena::workers

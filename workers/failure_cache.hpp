// SPDX-License-Identifier: GPL-3.0-or-later
// Host-wide failure cache (RFC 9520): names whose resolution failed recently, shared by
// every worker of one `dnsarena serve`, so that while a name's upstreams fail it costs no
// upstream attempt; the client is answered stale when an expired entry is still held
// (serve-stale, RFC 8767), else SERVFAIL with an Extended DNS Error (22: no reachable
// authority after timeouts; 23: the upstreams answered with errors).
//
// A failure is remembered for a window that starts at failure_cache.min_s and doubles
// each time the same name fails again right after its window (backoff), up to
// failure_cache.max_s (RFC 9520 section 3.2: at least 1 s, at most 5 min). A success
// clears the name. A name that has not failed for max_s starts again at min_s.
//
// Memory: one anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) that the supervisor
// makes before it forks the workers (as in_flight_names.hpp): it lives exactly as long as
// the service's processes, needs no version and no cleanup. Not part of the cache
// segment (a restart of the whole service forgets failures, as it should: the next
// query finds out afresh).
//
//   offset     size          field      meaning
//   0          8             seed       random; mixes the slot choice and the tag
//   8          8             base_ms    CLOCK_MONOTONIC milliseconds at creation (times are kept
//                                       relative to it)
//   16         4             buckets    a power of two
//   20         44            (zero)     so that bucket 0 starts on a cache line
//   64 + 64*b  8 x u64       bucket b   eight slots, one cache line
//
// A slot is one 64-bit word, so it is read and replaced whole (one load, one CAS):
//
//   |63 ------------ 40|39 -- 36|35 -- 34|33 ------------------------------ 0|
//   |      tag (24)    |level(4)|kind(2) |  until_ms (34): end of the window, |
//   |                  |        |        |  relative to base_ms (198 days)    |
//
//   0 = empty. tag: the high 24 bits of the mixed name hash, never 0 (a 0 tag is made 1).
//   level: the window is min_ms << level, capped at max_ms. kind: FailureKind.
//
// A name (its cache key without ECS: qname, qtype, DO/CD) lives in bucket
// mix(hash) mod buckets, in any of its eight slots; 24 tag bits plus the bucket's bits
// make a false match for an unrelated name about one in 2^24 per occupied slot, and its
// only effect is one early answer from stale data or SERVFAIL until the window ends.
//
// Concurrency: every worker reads and writes every slot. Readers load relaxed: the word
// is the whole record, nothing else is published with it. Writers replace a slot by CAS on the value
// they read; a writer that loses the race retries on the new value (bounded: at most
// eight slots, a few attempts), so two workers recording the same name converge on one
// slot. Two workers recording two names that both pick the same victim slot: one of the
// two records is lost, which costs only a future upstream attempt for that name.
// Crash safety: a worker killed at any instruction leaves each slot either old or new.
//
// Costs: lookup is one cache line (eight loads) and a compare each; record is the same
// plus one CAS. Memory: 64 + 64 x buckets bytes (the default 4,096 buckets: 256 KiB,
// 32,768 names).
#pragma once
#include "common/anonymous_mapping.hpp"
#include "common/monotonic_clock.hpp"
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace dnsarena::workers {

enum class FailureKind : std::uint8_t {
  timeout = 0,  // no upstream answered in time (EDE 22, No Reachable Authority)
  error = 1,    // the upstreams answered, with errors or unusable replies (EDE 23, Network Error)
  bogus = 2,    // the answer failed DNSSEC validation (EDE 6, DNSSEC Bogus; validation_jobs.hpp)
};

class FailureCache {
public:
  static constexpr unsigned kSlotsPerBucket = 8;
  static constexpr std::uint32_t kDefaultBuckets = 4096;

  // Maps the table (shared across fork() when `shared`, else private to this process).
  // `buckets` is rounded up to a power of two. Throws std::system_error when mmap fails.
  FailureCache(std::uint32_t buckets, bool shared);
  ~FailureCache();
  FailureCache(const FailureCache&) = delete;
  FailureCache& operator=(const FailureCache&) = delete;

  struct Failure {
    FailureKind kind;
    std::uint64_t remaining_ms;  // until the window ends
  };
  // The name's failure when its window has not ended at `now_ms` (CLOCK_MONOTONIC).
  std::optional<Failure> find(std::uint64_t name_hash, std::uint64_t now_ms) const;
  // Records a failure of the name at now_ms: a window of min_ms, or double the last one
  // when the name failed before and its window ended less than max_ms ago; at most max_ms.
  // Returns the window given.
  std::uint64_t record(std::uint64_t name_hash, FailureKind kind, std::uint64_t now_ms, std::uint32_t min_ms,
                       std::uint32_t max_ms);
  // A success: the name is forgotten.
  void clear(std::uint64_t name_hash);

  std::uint32_t buckets() const { return header_->buckets; }

private:
  struct Header {
    std::uint64_t seed;
    std::uint64_t base_ms;
    std::uint32_t buckets;
    std::uint8_t zero[44];
  };
  static_assert(sizeof(Header) == 64, "bucket 0 starts on its own cache line");
  static_assert(offsetof(Header, base_ms) == 8 && offsetof(Header, buckets) == 16, "the documented layout");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                "slots are shared between processes: only lock-free atomics are address-free");
  struct Place {
    std::atomic<std::uint64_t>* slots;  // the bucket's eight
    std::uint64_t tag;
  };
  Place place_of(std::uint64_t name_hash) const;
  std::uint64_t relative(std::uint64_t now_ms) const { return now_ms > header_->base_ms ? now_ms - header_->base_ms : 0; }

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
  std::atomic<std::uint64_t>* slots_ = nullptr;
};

// The failure cache's clock (the same in every process).
using common::monotonic_ms;

}  // namespace dnsarena::workers

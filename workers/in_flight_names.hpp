// SPDX-License-Identifier: GPL-3.0-or-later
// Host-wide count of upstream queries in flight per name, shared by every worker of one
// `dnsarena serve`, so that upstream_max_per_name holds across workers: an off-path
// attacker must not get more concurrent queries for one name by spreading its
// triggering misses over the SO_REUSEPORT group (a per-worker bound would allow
// N workers x the bound on the host).
//
// Memory: one anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) that the supervisor
// makes before it forks the workers, which inherit it. It is not part of the cache
// segment (whose format it does not touch) and has no name: it lives exactly as long as
// the service's processes, needs no cleanup and no version, and no other service sees it.
//
//   offset            size                 field    meaning
//   0                 8                    seed     random; mixes the bucket choice (below)
//   8                 4                    rows     worker rows (kRowsPerWorkerIndex per worker
//                                                   index: a reload's successor takes a free one,
//                                                   supervisor.cpp)
//   12                4                    buckets  per row, a power of two
//   16                48                   (zero)   so that row 0 starts on a cache line
//   64 + w*buckets*4  buckets x u32        row w    worker w's in-flight count per bucket
//
// A name (its cache key without ECS: qname, qtype, DO/CD) maps to bucket
// fmix64(CacheKey hash ^ seed) mod buckets; its host-wide count is the sum of that
// bucket over the rows.
//
// Concurrency: worker w is the only writer of row w (atomic fetch_add/fetch_sub); every
// worker reads every row. acquire() increments its own bucket first and then sums the
// rows (all seq_cst), and backs out if the sum exceeds the bound. Of two workers racing
// at bound - 1 each sees the other's increment, so the sum never exceeds the bound; both
// may be refused (a conservative race, not a leak).
// Crash safety: a killed worker's counts stay in its row until its replacement (same
// row, now the row's only writer) zeroes the row before it serves (reset_row). A worker
// replaced by a SIGHUP reload keeps running until its queries end, so its successor takes
// another of the index's rows instead of zeroing a row a live process still releases into
// (three rows: two reloads within one drain find a free row; a third ends the oldest
// retiring worker of the index). Between the
// kill and the replacement (the restart backoff, at most restart.backoff_max_ms) the dead
// worker's names count as still in flight: the bound errs on the refusing side, briefly.
//
// NOTE: names that share a bucket share the bound. With 16,384 buckets and a 64-bit
// mixed hash, a refusal for an unrelated name needs a bucket already holding the whole
// bound; and forcing collisions gains an attacker nothing, since asking the target name
// itself up to the bound has the same effect. The seed only keeps bucket choice
// unpredictable from outside.
// Costs: acquire is one fetch_add and `rows` loads on one cache line per row; release is
// one fetch_sub. The mapping is 64 + rows x 64 KiB.
#pragma once
#include "common/anonymous_mapping.hpp"
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dnsarena::workers {

class InFlightNames {
public:
  static constexpr std::uint32_t kBuckets = 16384;
  // Rows per worker index: worker i writes row i + k x workers for one k in 0..2 (supervisor.cpp).
  static constexpr unsigned kRowsPerWorkerIndex = 3;

  // Maps the table for `rows` workers (shared across fork() when `shared`, else private
  // to this process). Throws std::system_error when mmap fails.
  InFlightNames(unsigned rows, bool shared);
  ~InFlightNames();
  InFlightNames(const InFlightNames&) = delete;
  InFlightNames& operator=(const InFlightNames&) = delete;

  unsigned rows() const { return header_->rows; }
  // The bucket of a name, from its CacheKey hash (the key without ECS).
  std::uint32_t bucket_of(std::uint64_t key_hash) const;
  // Counts one more query for `bucket` in `row` when the host-wide count stays within
  // `bound`; false (nothing counted) otherwise.
  // REQUIRES: row < rows(), and this process is the row's only writer.
  bool acquire(unsigned row, std::uint32_t bucket, unsigned bound);
  // REQUIRES: a successful acquire(row, bucket) not yet released.
  void release(unsigned row, std::uint32_t bucket);
  // Zeroes a row: a worker starting on it (its predecessor's counts died with it).
  void reset_row(unsigned row);
  // Host-wide count for `bucket` (sum over the rows).
  unsigned count(std::uint32_t bucket) const;

private:
  struct Header {
    std::uint64_t seed;
    std::uint32_t rows;
    std::uint32_t buckets;
    std::uint8_t zero[48];
  };
  static_assert(sizeof(Header) == 64, "row 0 starts on its own cache line");
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
                "counts are shared between processes: only lock-free atomics are address-free");
  std::atomic<std::uint32_t>* row(unsigned w) const { return rows_ + static_cast<std::size_t>(w) * kBuckets; }

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
  std::atomic<std::uint32_t>* rows_ = nullptr;
};

}  // namespace dnsarena::workers

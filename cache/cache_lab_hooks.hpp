// SPDX-License-Identifier: GPL-3.0-or-later
// What the in-tree simulator and benchmarks reach of Cache beyond its public API: the
// fleet simulator's trace run (sim/fleet/cache_curve.cpp, cache_trace_run.cpp) and one
// key's footprint for the benchmark's memory floor (bench/cache_bench.cpp, cache_walk.cpp).
// Not installed with the library (cache/CMakeLists.txt): a resolver has no use for them,
// and they may change with the simulator. (The tests' hooks are test_hooks.hpp.)
//
// The trace run, per request of a trace known some steps ahead:
//
//   const IndexPosition pos = CacheLabHooks::prefetch_position(cache, key);  // steps ahead
//   CacheLabHooks::WriterHold hold(cache);                 // once per minute of the trace
//   if (CacheLabHooks::probe_at(cache, key, pos, now) != LookupStatus::hit)
//     CacheLabHooks::insert_encoded_held(cache, hold, key, padded_entry, now);
//
// Costs: prefetch_position hashes the key once and prefetches its two buckets; probe_at
// compares the entry's header and key in place (no copy); insert_encoded_held is
// insert_encoded without taking the lock.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "cache.hpp"

namespace dnsarena::cache {

// What one lookup of a key reads from the segment (CacheLabHooks::lookup_footprint): its
// two index buckets (one 64-byte line each) and the entry its key matches, if any.
struct LookupFootprint {
  const void* buckets[2] = {nullptr, nullptr};
  const std::uint8_t* entry = nullptr;  // nullptr: no live entry has the key (a miss)
  std::size_t entry_bytes = 0;          // the entry's length (its lines: [entry, entry + entry_bytes))
};

// The writer lock taken once for many insert_encoded_held() calls (cache_trace_run.cpp):
// the bounded wait (set_writer_lock_timeout) and the dead-owner repair of insert(), then
// held until destruction. Lock-free reads (probe_at, lookups) go on meanwhile in any
// process; this thread may probe while it holds the lock. Each insert still writes its
// bytes first and publishes them with one atomic store, so a holder killed between or
// inside inserts leaves what insert() would (repair() runs in the next writer).
// REQUIRES: no I/O and no waiting while held (other writers wait for the whole hold: meant
// for a private segment, such as a simulator curve's); one thread uses it.
class Cache::WriterHold {
public:
  explicit WriterHold(Cache& cache);
  ~WriterHold() = default;  // the guard unlocks
  WriterHold(const WriterHold&) = delete;
  WriterHold& operator=(const WriterHold&) = delete;
  bool owns() const { return guard_.owns(); }

private:
  friend class Cache;
  Cache& cache_;
  std::string error_;  // the repair's message when it failed (writer_lock_unavailable)
  RobustLockGuard guard_;
};

inline IndexPosition Cache::prefetch_position(const CacheKey& key) const {
  const IndexPosition pos = index_position(key_hash(key), bucket_count_);
  __builtin_prefetch(&buckets_[pos.bucket1]);
  __builtin_prefetch(&buckets_[pos.bucket2]);
  return pos;
}

struct CacheLabHooks {
  // The writer lock held across a run of inserts (the simulator holds it for a minute of
  // its trace: one acquisition instead of one per miss); see Cache::WriterHold above.
  using WriterHold = Cache::WriterHold;

  // The key's index position (buckets and tag of its hash), both buckets prefetched: a
  // caller that knows its keys some steps ahead keeps it for probe_at().
  static IndexPosition prefetch_position(const Cache& c, const CacheKey& key) { return c.prefetch_position(key); }
  // Cache::probe() from the position prefetch_position(key) gave: the same outcome,
  // counters and hit bit; the entry's header and key are compared in place (no copy).
  static LookupStatus probe_at(Cache& c, const CacheKey& key, const IndexPosition& pos, std::uint32_t now) {
    return c.probe_at(key, pos, now);
  }
  // Cache::insert_encoded() under a hold: the same checks, entry, placement, counters and
  // result; `skipped` (counted) when the hold did not get the lock.
  static InsertStatus insert_encoded_held(Cache& c, WriterHold& hold, const CacheKey& key,
                                          std::span<const std::uint8_t> padded_entry, std::uint32_t now) {
    return c.insert_encoded_held(hold, key, padded_entry, now);
  }

  // Where a lookup of `key` reads (the benchmark's memory floor: `dnsarena bench` loads
  // exactly these lines with no other work). Validated as a lookup's read is (the
  // seqlock), expiry not checked; counts nothing, changes nothing. It reads the buckets
  // and the candidate entries' header and key, so those lines are cached afterwards.
  static LookupFootprint lookup_footprint(const Cache& c, const CacheKey& key) { return c.lookup_footprint(key); }
};

}  // namespace dnsarena::cache

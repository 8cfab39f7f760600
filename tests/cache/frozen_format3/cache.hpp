// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/cache.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// dnsarena's DNS answer cache over one shared-memory segment.
//
// Purpose: several processes (resolver workers) share one compact cache. Each process
// attaches the segment (segment.hpp) and builds a Cache over it.
//
// Operations and their costs:
//   lookup          no lock. Hash the key, read two index buckets (one cache line each,
//                   loaded in parallel), copy the entry whose tag and key match, check the
//                   region generation (seqlock), check expiry, set the hit bit once.
//                   About two dependent memory accesses.
//   lookup_batch    the same for many keys, prefetching all buckets, then all entries, so
//                   the memory accesses of the batch overlap.
//   probe           lookup's search, counters and hit bit, copying only the entry's header
//                   and key: hit or miss without an answer (the fleet simulator).
//   prefetch_*_of   hints: a key's buckets, then its candidate entries (no effect).
//   insert          encode into a reused scratch buffer (no lock), then under the writer
//                   lock: make room, append to the head region, publish with one atomic
//                   store into the index.
//   erase           under the writer lock: one atomic store.
//
// Liveness: inserts and erases never throw for the lock's sake and never wait longer than
// set_writer_lock_timeout() (default: without bound). A lock still held after the wait
// (a stopped holder) or a lock that can never be taken again (ENOTRECOVERABLE: a repair
// failed) makes them skip the write and count it (writer_lock_unavailable); the second
// is also printed once per process on stderr. Lookups
// take no lock and go on: every copy is validated by the seqlock, so a segment whose
// writes stopped still answers from what it holds. `dnsarena check` reports such a lock.
//
// Eviction ("older or less popular", log_arena.cpp): the arena is a ring of regions
// filled in order. When the head region is full, the oldest region is reclaimed: expired
// entries are dropped, entries hit since they were written get a second chance (copied
// to the head, hit bit cleared), the rest are evicted. The live-entry limit is enforced
// the same way. No fragmentation, no per-entry allocation header.
//
// Lock order: there is one lock, the writer lock in the segment header. It is robust
// (robust_mutex.hpp): a process killed while holding it is detected by the next writer,
// which runs repair() before going on. No lock is ever held across I/O.
//
// Crash safety: bytes are written first and published last with one atomic store, so a
// writer killed at any instruction leaves either the old or the new state in the index.
// What can be left half-done (a reclaim, the live-entry count, bytes_in_use) is recorded
// in the header and finished or recounted by repair().
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "cache_key.hpp"
#include "entry_codec.hpp"
#include "response_writer.hpp"
#include "robust_mutex.hpp"
#include "segment.hpp"

namespace dnsarena::frozen3 {

enum class LookupStatus { hit, miss, expired };
// skipped: the writer lock was not available (the bounded wait ran out, or the lock is
// not recoverable): nothing was written; counted as writer_lock_unavailable. The caller
// serves its answer uncached.
enum class InsertStatus { inserted, replaced, rejected, skipped };

// A validated private copy of one entry, made by lookup().
struct EntryCopy {
  alignas(8) std::array<std::uint8_t, kMaxEntryBytes + 8> bytes;
  std::size_t length = 0;
  std::span<const std::uint8_t> span() const { return {bytes.data(), length}; }
};

struct CacheStats {
  std::uint64_t live_entries = 0;
  std::uint64_t max_entries = 0;
  std::uint64_t bytes_in_use = 0;      // arena bytes holding written entries (incl. dead ones)
  std::uint64_t arena_bytes = 0;
  std::uint64_t index_bytes = 0;
  std::uint64_t fixed_bytes = 0;       // header, stat slots, region table
  std::uint64_t segment_bytes = 0;
  std::uint64_t repairs = 0;
  std::array<std::uint64_t, kCounterCount> counters{};  // summed over stat slots
  std::uint64_t counter(Counter c) const { return counters[static_cast<std::size_t>(c)]; }
  // (index + arena in use + fixed) / live entries.
  double bytes_per_entry() const {
    return live_entries ? static_cast<double>(index_bytes + bytes_in_use + fixed_bytes) / live_entries : 0.0;
  }
};

// A test hook that replaces the key hash (a deliberately bad hash makes every key collide).
// Set through CacheTestHooks (cache/test_hooks.hpp, in-tree tests only, not installed).
using HashOverride = std::function<std::uint64_t(const CacheKey&)>;

class Cache {
public:
  // Claims a stat slot for this process (role is recorded for `stats`).
  explicit Cache(Segment& segment, SlotRole role = SlotRole::other, std::uint64_t worker_index = 0);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  LookupStatus lookup(const CacheKey& key, std::uint32_t now, EntryCopy& out);
  // The same search, counters and hit bit as lookup(), but only the entry's header and
  // key are copied (enough to compare the key and check the expiry), not its records:
  // for callers that need hit or miss and no answer (the fleet simulator's trace runs).
  LookupStatus probe(const CacheKey& key, std::uint32_t now);
  // Prefetch hints for a caller that looks keys up one after another but knows them some
  // steps ahead (the simulator): first the key's two index buckets, then, once those have
  // arrived, the entries their slots point to with a matching tag. Hints only: they read
  // the index without validating it and change nothing.
  void prefetch_buckets_of(const CacheKey& key) const { prefetch_buckets(key_hash(key)); }
  void prefetch_entries_of(const CacheKey& key) const;

  // Looks up `key` and writes the response for `query` into `out`. Returns the response
  // size (0 on miss or when it does not fit; see ResponseResult).
  ResponseResult lookup_response(const CacheKey& key, const QueryInfo& query, std::uint32_t now,
                                 const ResponseOptions& options, std::uint8_t* out, std::size_t capacity,
                                 LookupStatus* status = nullptr);

  // Looks up keys[0..n) with prefetching; calls on_result(i, status, copy) for each.
  // REQUIRES: n <= kMaxBatch.
  static constexpr std::size_t kMaxBatch = 64;
  void lookup_batch(const CacheKey* const* keys, std::size_t n, std::uint32_t now,
                    const std::function<void(std::size_t, LookupStatus, const EntryCopy&)>& on_result);

  InsertStatus insert(const CacheKey& key, const Answer& answer, std::uint32_t now);
  // Inserts already encoded entry bytes (padded), as produced by encode_entry.
  InsertStatus insert_encoded(const CacheKey& key, std::span<const std::uint8_t> padded_entry, std::uint32_t now);
  bool erase(const CacheKey& key);

  CacheStats stats() const;
  StatSlot& my_stats() { return *slot_; }
  // Adds to this process's counters: a plain load and store when the slot is ours alone,
  // an atomic add when it is shared (every slot was taken).
  void count(Counter c, std::uint64_t n = 1) {
    if (owns_slot_) slot_->add_owned(c, n);
    else slot_->add(c, n);
  }
  Segment& segment() { return seg_; }

  // Bounds how long insert/erase wait for the writer lock (nanoseconds::max(): without
  // bound, the default). Workers use a few milliseconds.
  void set_writer_lock_timeout(std::chrono::nanoseconds t) { writer_lock_timeout_ = t; }

  // Runs the dead-owner repair unconditionally, under the writer lock (tests, `check`).
  void repair_now();
  // Takes the writer lock (repairing if needed) and calls fn while holding it.
  void with_writer_lock(const std::function<void()>& fn);

  // Crash points inside writes: see failpoint.hpp (set_failpoint), one per write step.
  // The key's hash: key.hash(), or the test hook's.
  std::uint64_t key_hash(const CacheKey& key) const { return hash_override_ ? hash_override_(key) : key.hash(); }

private:
  friend class SegmentChecker;
  friend struct CacheTestHooks;
  // --- reads (cache_read.cpp) ---
  // Adds a lookup's outcome to this process's counters; returns it.
  LookupStatus counted(LookupStatus st);
  // Copies at most `copy_limit` bytes of the entry (at least its header and key).
  LookupStatus find_and_copy(const CacheKey& key, std::uint64_t hash, std::uint32_t now, EntryCopy& out,
                             std::size_t copy_limit = kMaxEntryBytes);
  void prefetch_buckets(std::uint64_t hash) const {
    const IndexPosition pos = index_position(hash, bucket_count_);
    __builtin_prefetch(&buckets_[pos.bucket1]);
    __builtin_prefetch(&buckets_[pos.bucket2]);
  }
  // Prefetches the entries that the slots of both buckets with a matching tag point to.
  void prefetch_entries(const IndexPosition& pos) const;
  InsertStatus insert_hashed(const CacheKey& key, std::uint64_t hash, std::span<const std::uint8_t> padded,
                             std::uint32_t now);
  // --- writes (cache_write.cpp); REQUIRES: writer lock held ---
  struct SlotRef {
    std::atomic<std::uint64_t>* slot = nullptr;
    std::uint64_t value = 0;
  };
  SlotRef find_linked(std::span<const std::uint8_t> key_blob, std::uint64_t hash) const;
  SlotRef find_slot_of(ArenaOffset off, std::uint64_t hash) const;
  void place(std::span<const std::uint8_t> key_blob, std::uint64_t hash, ArenaOffset off, bool* replaced);
  void unlink(std::atomic<std::uint64_t>* slot);
  // --- log arena (log_arena.cpp); REQUIRES: writer lock held ---
  ArenaOffset append(std::span<const std::uint8_t> padded, std::uint32_t now);
  bool append_without_reclaim(std::span<const std::uint8_t> padded, ArenaOffset* off);
  void advance_head(std::uint32_t now);
  // second_chances: whether hit entries are re-appended (false: every entry leaves).
  void reclaim_tail(std::uint32_t now, bool second_chances);
  void reclaim_region(std::uint32_t region, std::uint32_t now, bool second_chances);
  void make_room_for_one(std::uint32_t now);
  void repair();
  // Clears every slot that is not a valid, unique link to a whole published entry of
  // the current generation of a used region. Returns how many it cleared. O(index).
  std::uint64_t drop_bad_slots();
  std::uint32_t tail_region() const;
  std::uint32_t region_of(ArenaOffset off) const { return static_cast<std::uint32_t>(off.byte_offset() >> region_shift_); }
  const std::uint8_t* entry_address(ArenaOffset off) const { return seg_.arena() + off.byte_offset(); }
  std::uint64_t entry_hash_at(ArenaOffset off) const;

  // Counts (and, for a lock that cannot be taken again, reports once) a skipped write.
  void writer_lock_unavailable(LockResult r, const std::string& error);

  Segment& seg_;
  SegmentHeader& hdr_;
  std::chrono::nanoseconds writer_lock_timeout_ = std::chrono::nanoseconds::max();
  RegionDesc* regions_;
  Bucket* buckets_;
  std::uint64_t bucket_count_;
  std::uint32_t region_bytes_;
  std::uint32_t region_shift_;  // region_bytes_ == 1 << region_shift_
  std::uint32_t region_count_;
  StatSlot* slot_ = nullptr;
  bool owns_slot_ = false;
  std::vector<std::uint8_t> scratch_;
  struct PendingEntry {
    std::uint32_t pos;
    std::uint64_t hash;
  };
  std::vector<PendingEntry> reclaim_scratch_;
  HashOverride hash_override_;
};

// Wall-clock seconds, the `now` used by workers and tools.
std::uint32_t wall_clock_now();

}  // namespace dnsarena::frozen3

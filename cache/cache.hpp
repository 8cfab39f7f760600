// SPDX-License-Identifier: GPL-3.0-or-later
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
//   lookup_responses  the batched lookup that writes each hit's response, in stages that
//                   never wait on a line they just requested (cache_batch_read.cpp): hash
//                   all keys and prefetch their buckets; scan the buckets for tag matches
//                   and prefetch those entries; then copy each entry under the seqlock and
//                   write its response in one walk (response_direct.hpp). No heap, no
//                   std::function.
//   probe           lookup's search, counters and hit bit, copying only the entry's header
//                   and key: hit or miss without an answer (the fleet simulator).
//   prefetch_*_of   hints: a key's buckets, then its candidate entries (no effect).
//   insert          encode into a reused scratch buffer (no lock), then under the writer
//                   lock: make room, append to the head region, publish with one atomic
//                   store into the index.
//   insert_batch    the same for many entries: all hashed and their buckets loaded, all
//                   encoded, then one lock acquisition, appended and published one by one.
//   erase           under the writer lock: one atomic store.
//
// What only the in-tree simulator, benchmarks and tests use is reached through headers
// that are not installed: cache_lab_hooks.hpp (the simulator's trace run, the benchmark's
// memory floor), test_hooks.hpp (a replacement hash, the writer lock on demand) and
// failpoint.hpp (crash points inside writes).
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
// Lock order: there is one lock, the writer lock in the segment header (also held by a
// Cache::WriterHold for its lifetime; probes and lookups never take it). It is robust
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
#include <string>
#include <vector>

#include "cache_key.hpp"
#include "entry_codec.hpp"
#include "response_writer.hpp"
#include "robust_mutex.hpp"
#include "segment.hpp"

namespace dnsarena::cache {

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

struct LookupFootprint;  // cache_lab_hooks.hpp

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
  // (index + arena in use + fixed) / live entries. The index and the fixed part are
  // preallocated for max_entries: at low fill this figure is mostly them.
  double bytes_per_entry() const {
    return live_entries ? static_cast<double>(index_bytes + bytes_in_use + fixed_bytes) / live_entries : 0.0;
  }
  // Arena bytes in use / live entries: what each entry costs in the log (dead copies
  // not yet reclaimed included); independent of how full the cache is.
  double arena_bytes_per_entry() const {
    return live_entries ? static_cast<double>(bytes_in_use) / live_entries : 0.0;
  }
  // The preallocated index per entry at capacity (index_bytes / max_entries).
  double index_bytes_per_slot_at_capacity() const {
    return max_entries ? static_cast<double>(index_bytes) / max_entries : 0.0;
  }
};

// One query of a batch for Cache::lookup_responses(). The caller fills the first five
// fields; status and response are the results (response.size 0 on a miss, or when the
// response does not fit, as lookup_response()).
struct ResponseLookup {
  const CacheKey* key = nullptr;
  const QueryInfo* query = nullptr;
  const ResponseOptions* options = nullptr;
  std::uint8_t* out = nullptr;
  std::size_t capacity = 0;
  LookupStatus status = LookupStatus::miss;
  ResponseResult response;
};

// One entry of a batch for Cache::insert_batch(): the key and answer (as insert()); status
// is the result.
struct InsertItem {
  const CacheKey* key = nullptr;
  const Answer* answer = nullptr;
  InsertStatus status = InsertStatus::rejected;
};

class Cache {
public:
  // Claims a stat slot for this process (role is recorded for `stats`).
  explicit Cache(Segment& segment, SlotRole role = SlotRole::other, std::uint64_t worker_index = 0);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  LookupStatus lookup(const CacheKey& key, std::uint32_t now, EntryCopy& out);
  // lookup() without counters and, for an expired entry, with its copy in `out`: the
  // serve-stale read (RFC 8767), made only when the upstream has failed. An expired entry
  // is still in the arena until reclaim reaches its region; its expiry (EntryReader::
  // expire) says how stale it is. A fresh entry found here is a hit (hit bit set).
  LookupStatus peek(const CacheKey& key, std::uint32_t now, EntryCopy& out);
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

  // Looks up every key of `batch` and writes each hit's response, as lookup_response()
  // would one by one (same statuses, counters, hit bits and response bytes), with the
  // memory accesses of up to kMaxBatch keys at a time overlapped. Any batch size.
  void lookup_responses(std::span<ResponseLookup> batch, std::uint32_t now);

  InsertStatus insert(const CacheKey& key, const Answer& answer, std::uint32_t now);
  // Inserts every item in order, with the same result as insert() one by one (statuses,
  // counters, evictions, what a later lookup finds): encodes up to kMaxBatch entries
  // outside the lock after loading their buckets, then appends and publishes them
  // all under one acquisition of the writer lock (cache_batch_write.cpp). Any size.
  void insert_batch(std::span<InsertItem> items, std::uint32_t now);
  // Inserts already encoded entry bytes (padded), as produced by encode_entry.
  InsertStatus insert_encoded(const CacheKey& key, std::span<const std::uint8_t> padded_entry, std::uint32_t now);
  bool erase(const CacheKey& key);

  // --- walking every entry (cache_walk.cpp): operator tools (dump, top, flush) ---
  // Visits every entry linked from the index, without a lock, each as a validated copy
  // (lookup's seqlock rule), expired ones included; `hit` is the slot's hit bit. An
  // entry placed or moved while the walk runs (insert, cuckoo step, second chance) may
  // be missed or visited twice; callers that need each key once deduplicate. With
  // clear_hit_bits, each visited slot's hit bit is cleared by a compare-exchange on the
  // exact value seen (the rule readers set it by): `top` samples which entries are hit
  // again; an entry so cleared loses its second chance unless it is hit again before its
  // region is reclaimed. Counts nothing, takes no stat slot time.
  // Cost: one pass over the index (bucket_count cache lines) plus one copy per live entry.
  void for_each_entry(const std::function<void(const EntryCopy&, bool hit)>& visit, bool clear_hit_bits = false);

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

private:
  friend class SegmentChecker;
  friend struct CacheLabHooks;
  friend struct CacheTestHooks;
  // --- the simulator's and the benchmark's (cache_lab_hooks.hpp: documented there) ---
  class WriterHold;
  inline IndexPosition prefetch_position(const CacheKey& key) const;
  LookupStatus probe_at(const CacheKey& key, const IndexPosition& pos, std::uint32_t now);
  InsertStatus insert_encoded_held(WriterHold& hold, const CacheKey& key, std::span<const std::uint8_t> padded_entry,
                                   std::uint32_t now);
  LookupFootprint lookup_footprint(const CacheKey& key) const;
  // --- the tests' (test_hooks.hpp) ---
  void repair_now();
  void with_writer_lock(const std::function<void()>& fn);
  // The key's hash: key.hash(), or the test hook's (CacheTestHooks::set_hash_override).
  std::uint64_t key_hash(const CacheKey& key) const { return hash_override_ ? hash_override_(key) : key.hash(); }
  // --- reads (cache_read.cpp) ---
  // Adds a lookup's outcome to this process's counters; returns it.
  LookupStatus counted(LookupStatus st);
  // Copies at most `copy_limit` bytes of the entry (at least its header and key).
  LookupStatus find_and_copy(const CacheKey& key, std::uint64_t hash, std::uint32_t now, EntryCopy& out,
                             std::size_t copy_limit = kMaxEntryBytes);
  // --- lock-free reads of slots and entries (inline, defined in slot_read.hpp) ---
  // A slot's verdict under the seqlock: stale (its region was recycled, or the slot lies
  // above the fill: reload the slots and retry), other (not a sane entry, or the reader
  // turned it down: another key) or match.
  enum class SlotRead { stale, other, match };
  // The one seqlock read of slot value s's entry (every lock-free reader's): when the
  // entry is whole below its region's fill and at least min_len bytes long (REQUIRES:
  // min_len >= kEntryHeaderBytes + kKeyFixedBytes), body(words, first word, length) reads
  // it through relaxed loads, only below its length, and says whether it is the one
  // wanted (bool); then the generation is re-checked. match: the body said yes and what
  // it read was published. An entry too short for min_len is `other`.
  template <class Body>
  SlotRead read_seqlocked(std::uint64_t s, std::size_t min_len, Body&& body) const;
  // The one scan of a key's two buckets: bucket 1's slots in order, then bucket 2's (the
  // order every lookup reads them in), each loaded with Order; visit(slot, value) on
  // those with the key's hash tag until it returns true. Returns whether one did.
  template <std::memory_order Order, class Visit>
  bool for_each_tagged_slot(const IndexPosition& pos, Visit&& visit) const;
  // A lookup's search over the scan: read(value) gives each tagged slot's SlotRead; the
  // first match ends it; a stale one reloads both buckets and starts again, at most 8
  // attempts in all (*retries += the attempts that ended stale; the caller counts them).
  // Returns the matching slot (its value in *value), or nullptr: a miss.
  template <class ReadSlot>
  std::atomic<std::uint64_t>* find_key_slot(const IndexPosition& pos, ReadSlot&& read, std::uint64_t* value,
                                            unsigned* retries) const;
  // The entry copied under the seqlock (at most `copy_limit` bytes; out.length = its
  // length on a match, which here means any sane published entry).
  inline SlotRead copy_slot_entry(std::uint64_t s, EntryCopy& out, std::size_t copy_limit) const;
  // copy_slot_entry, then the key compared: other when the entry holds another key.
  inline SlotRead read_slot_entry(std::uint64_t s, std::span<const std::uint8_t> key_blob, EntryCopy& out,
                                  std::size_t copy_limit) const;
  // For a match: expired when `now` is past its expiry, else hit (setting the slot's hit
  // bit by CAS on the value read, s, so it never alters another entry's slot).
  inline LookupStatus hit_or_expired(std::atomic<std::uint64_t>& slot, std::uint64_t s, std::uint32_t now,
                                     std::uint32_t expire);
  // The fused read (idea: no private copy): the slot's entry read in the arena and its
  // response written straight into out, then the seqlock check. hit: `result` holds the
  // response and the hit bit is set; expired: nothing written; fallback: anything else
  // (the region recycled, another key, an entry the arena walk does not handle, a
  // response that does not fit): whatever was written to out is garbage and the caller
  // takes the copying path (read_slot_entry / find_and_copy).
  enum class FusedRead { hit, expired, fallback };
  inline FusedRead read_slot_response(std::atomic<std::uint64_t>& slot, std::uint64_t s,
                                      std::span<const std::uint8_t> key_blob, const QueryInfo& query, std::uint32_t now,
                                      const ResponseOptions& options, std::uint8_t* out, std::size_t capacity,
                                      ResponseResult* result);
  // The first slot of the scan (for_each_tagged_slot) with the key's hash tag (its value
  // in *value), loaded relaxed; nullptr when none.
  inline std::atomic<std::uint64_t>* first_tagged_slot(const IndexPosition& pos, std::uint64_t* value) const;
  void prefetch_buckets(std::uint64_t hash) const {
    const IndexPosition pos = index_position(hash, bucket_count_);
    __builtin_prefetch(&buckets_[pos.bucket1]);
    __builtin_prefetch(&buckets_[pos.bucket2]);
  }
  // Prefetches the entries that the slots of both buckets with a matching tag point to.
  void prefetch_entries(const IndexPosition& pos) const;
  InsertStatus insert_hashed(const CacheKey& key, std::uint64_t hash, std::span<const std::uint8_t> padded,
                             std::uint32_t now);
  // The locked part of one insert: clock high water, room, append, publish.
  // REQUIRES: writer lock held; padded checked (non-empty, aligned, <= a region).
  void insert_locked(std::span<const std::uint8_t> key_blob, std::uint64_t hash, std::span<const std::uint8_t> padded,
                     std::uint32_t now, bool* replaced);
  // --- writes (cache_write.cpp); REQUIRES: writer lock held ---
  struct SlotRef {
    std::atomic<std::uint64_t>* slot = nullptr;
    std::uint64_t value = 0;
  };
  SlotRef find_linked(std::span<const std::uint8_t> key_blob, std::uint64_t hash) const;
  SlotRef find_slot_of(ArenaOffset off, std::uint64_t hash) const;
  // One pass over a key's two buckets: the slot linking the key (find_linked's), and per
  // bucket the slots in use and the first free one.
  struct BucketScan {
    SlotRef linked;
    std::atomic<std::uint64_t>* free[2] = {nullptr, nullptr};
    unsigned used[2] = {0, 0};
  };
  BucketScan scan_buckets(std::span<const std::uint8_t> key_blob, std::uint64_t hash) const;
  // Links the entry at `off` from the slot the scan chose (the key's own slot, a free
  // one, a cuckoo step or a conflict eviction). REQUIRES: `scan` of this key and hash,
  // taken under this lock holding with no reclaim since.
  void place(const BucketScan& scan, std::uint64_t hash, ArenaOffset off, bool* replaced);
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
  // insert_batch's encoded entries, one reused buffer per batch position (no heap once
  // they have grown), and their key hashes.
  std::vector<std::vector<std::uint8_t>> batch_encoded_;
  // Reclaim's pass 1 record of one entry: what pass 2 needs, so that pass 2 reads the
  // entry's bytes again only to copy a second chance (the region is as large as L2).
  struct PendingEntry {
    std::uint32_t pos;
    std::uint32_t padded;
    std::uint32_t expire;
    std::uint64_t hash;
  };
  std::vector<PendingEntry> reclaim_scratch_;
  std::uint64_t reclaims_ = 0;  // regions this process reclaimed (insert_locked: index changed?)
  std::function<std::uint64_t(const CacheKey&)> hash_override_;  // test hook: empty, or replaces key.hash()
  // Test hook (CacheTestHooks): called by read_slot_response between its walk and its
  // seqlock re-check, where a test recycles the region under the reader.
  void (*after_arena_walk_)(void*) = nullptr;
  void* after_arena_walk_arg_ = nullptr;
};

// Wall-clock seconds, the `now` used by workers and tools.
std::uint32_t wall_clock_now();

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet simulator's entry points (sim/fleet/cache_curve.cpp): a probe from an index
// position computed when the key's buckets were prefetched, and inserts of encoded bytes
// under a writer lock held across many of them. They run the real cache in trace order
// (a probe sees every earlier insert, an insert's reclaim evicts what a later probe would
// have hit), with the same outcomes, counters and index/arena state as probe() and
// insert_encoded() called one by one (tests/cache/trace_run_test.cpp compares them).
//
// Concurrency: probe_at is a lock-free reader like find_and_copy (cache_read.cpp), through
// the same scan and seqlock read (find_key_slot, read_seqlocked: slot_read.hpp), so a
// compare torn by a recycle is never believed. insert_encoded_held REQUIRES the hold to
// own the writer lock (it checks, and skips otherwise); it calls insert_locked, as
// insert() does.
// FORMAT-DEPENDENT: reads the entry header (entry_format.hpp) and slots (index_slot.hpp).
#include <atomic>
#include <stdexcept>

#include "cache.hpp"
#include "cache_lab_hooks.hpp"
#include "response_in_arena.hpp"
#include "slot_read.hpp"

namespace dnsarena::cache {

LookupStatus Cache::probe_at(const CacheKey& key, const IndexPosition& pos, std::uint32_t now) {
  const auto blob = key.blob();
  const std::size_t k = blob.size();
  // key_equal_in_arena compares whole words: a blob of 6 or 7 bytes (a one-letter name
  // or the root, no ECS) takes the copying probe.
  if (k < 8) return probe(key, now);
  // Each slot with the key's tag read in place under the seqlock: read_slot_entry's
  // verdicts (slot_read.hpp) without the copy of the header and key. Every word compared
  // lies below the entry's length, which read_seqlocked keeps below the fill.
  std::uint32_t expire = 0;
  const auto compare = [&](const std::uint64_t* w, std::uint64_t h0, std::size_t) __attribute__((always_inline)) {
    expire = static_cast<std::uint32_t>(h0 >> 32);
    return key_equal_in_arena(w, blob.data(), k);
  };
  const auto read_in_place = [&](std::uint64_t s) __attribute__((always_inline)) {
    return read_seqlocked(s, kEntryKeyOffset + k, compare);
  };
  std::uint64_t s = 0;
  unsigned retries = 0;
  std::atomic<std::uint64_t>* slot = find_key_slot(pos, read_in_place, &s, &retries);
  if (retries != 0) count(Counter::lookup_retries, retries);
  return counted(slot != nullptr ? hit_or_expired(*slot, s, now, expire) : LookupStatus::miss);
}

Cache::WriterHold::WriterHold(Cache& cache)
    : cache_(cache),
      guard_(&cache.hdr_.writer_lock, [&cache] { cache.repair(); }, cache.writer_lock_timeout_, &error_) {}

InsertStatus Cache::insert_encoded_held(WriterHold& hold, const CacheKey& key, std::span<const std::uint8_t> padded,
                                        std::uint32_t now) {
  if (padded.empty() || padded.size() % kEntryAlignment != 0 || padded.size() > region_bytes_) {
    count(Counter::rejected_inserts);
    return InsertStatus::rejected;
  }
  if (&hold.cache_ != this) throw std::logic_error("insert_encoded_held: the hold is another cache's");
  if (!hold.owns()) {
    writer_lock_unavailable(hold.guard_.result(), hold.error_);
    return InsertStatus::skipped;
  }
  bool replaced = false;
  insert_locked(key.blob(), key_hash(key), padded, now, &replaced);
  count(Counter::inserts);
  if (replaced) count(Counter::replaces);
  return replaced ? InsertStatus::replaced : InsertStatus::inserted;
}

}  // namespace dnsarena::cache

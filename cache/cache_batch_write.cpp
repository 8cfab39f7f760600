// SPDX-License-Identifier: GPL-3.0-or-later
// The batched insert: insert_batch() (cache.hpp).
//
// Per chunk of up to kMaxBatch items:
//   1. outside the lock:
//      a. hash each key and load one word of its two buckets (bucket_touch.hpp): the
//         chunk's index misses overlap each other and the encoding below
//      b. encode each entry into that position's reused buffer
//   2. one writer-lock acquisition: for each item in order, insert_locked() (make room,
//      append the bytes, publish the slot), exactly the steps of a single insert
//   3. outcomes tallied, outside the lock; the counters get one add each per batch
// Crash safety is that of insert(): each entry is written bytes first, fill next, its
// slot last with one atomic store; a writer killed between two items leaves the earlier
// ones published and the later ones absent. Stage 1a only reads. No new write
// step, so no new failpoint.
// Why batch: a single insert pays one lock round trip (robust mutex: two atomic RMWs and
// the robust-list bookkeeping) and one index miss that its encode overlaps only partly.
// The buckets are loaded before the lock (stage 1a), not prefetched: bucket_touch.hpp
// says why. The arena lines the chunk will be appended to are not loaded ahead: the
// appends are bound by writing fresh lines, not by their latency.
#include <algorithm>
#include <string>

#include "cache.hpp"
#include "bucket_touch.hpp"

namespace dnsarena::cache {

void Cache::insert_batch(std::span<InsertItem> items, std::uint32_t now) {
  if (batch_encoded_.size() < kMaxBatch) batch_encoded_.resize(kMaxBatch);
  std::uint64_t hashes[kMaxBatch];
  std::size_t sizes[kMaxBatch];  // padded size of batch_encoded_[i]
  std::uint64_t n_rejected = 0, n_inserted = 0, n_replaced = 0;
  for (std::size_t first = 0; first < items.size(); first += kMaxBatch) {
    const std::size_t n = std::min(kMaxBatch, items.size() - first);
    InsertItem* b = items.data() + first;
    // Stage 1: hash and load the buckets, then encode; no lock.
    std::uint64_t touched = 0;
    for (std::size_t i = 0; i < n; ++i) {
      hashes[i] = key_hash(*b[i].key);
      touched += touch_buckets(buckets_, index_position(hashes[i], bucket_count_));
    }
    keep_loaded(touched);
    std::size_t to_write = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool ok = encode_entry_into(*b[i].key, *b[i].answer, now, batch_encoded_[i], &sizes[i]) != 0 &&
                      sizes[i] % kEntryAlignment == 0 && sizes[i] <= region_bytes_;
      b[i].status = ok ? InsertStatus::inserted : InsertStatus::rejected;
      to_write += ok;
    }
    // Stage 2: one lock acquisition for the whole chunk.
    if (to_write != 0) {
      std::string error;
      RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); }, writer_lock_timeout_, &error);
      if (!lock.owns()) {
        for (std::size_t i = 0; i < n; ++i)
          if (b[i].status != InsertStatus::rejected) {
            b[i].status = InsertStatus::skipped;
            writer_lock_unavailable(lock.result(), error);
          }
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          if (b[i].status == InsertStatus::rejected) continue;
          bool replaced = false;
          insert_locked(b[i].key->blob(), hashes[i], {batch_encoded_[i].data(), sizes[i]}, now, &replaced);
          if (replaced) b[i].status = InsertStatus::replaced;
        }
      }
    }
    // Stage 3: the chunk's outcomes, tallied here and added to the counters once per batch.
    for (std::size_t i = 0; i < n; ++i) {
      n_rejected += b[i].status == InsertStatus::rejected;
      n_inserted += b[i].status == InsertStatus::inserted || b[i].status == InsertStatus::replaced;
      n_replaced += b[i].status == InsertStatus::replaced;
    }
  }
  // As insert() counts them, one add per counter instead of one per item.
  if (n_rejected != 0) count(Counter::rejected_inserts, n_rejected);
  if (n_inserted != 0) count(Counter::inserts, n_inserted);
  if (n_replaced != 0) count(Counter::replaces, n_replaced);
}

}  // namespace dnsarena::cache

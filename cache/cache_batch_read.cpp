// SPDX-License-Identifier: GPL-3.0-or-later
// The pipelined batch lookup: lookup_responses() (cache.hpp).
//
// Stages, each over the whole batch (up to kMaxBatch keys) before the next starts, so
// each one touches lines the previous one requested a whole batch earlier:
//
//   1. hash      index position of every key; prefetch both bucket lines
//   2. tags      the first slot of the key's buckets (bucket 1's eight in order, then
//                bucket 2's: for_each_tagged_slot, slot_read.hpp) whose hash tag
//                matches: the slot find_and_copy() would read first; prefetch its entry
//                (two lines: most entries are 64-150 bytes and start anywhere in a
//                line). Relaxed loads and one acquire fence after
//                the stage, which orders them before the entry reads as acquire loads do.
//   3. answer    the fused read (read_slot_response, slot_read.hpp): the response
//                written straight from the entry in the arena (response_in_arena.hpp),
//                then the seqlock re-check. What it gives up on (a recycled region,
//                another key, records it does not handle, a response that does not fit)
//                takes the copying path: read that slot's entry under the seqlock
//                (read_slot_entry, the very read of find_and_copy), then write the
//                response from the private copy in one walk (write_response_direct), or
//                write_response() when the entry needs name compression or TC handling
//
// A key with no matching tag is a miss (find_and_copy would return miss on the same slot
// values). A key whose first tagged slot holds another key (about 1 in 2,000) or turned
// stale goes to find_and_copy, which reads the slots again and retries as a single
// lookup. So every lookup here returns what lookup_response() returns for the same slot
// values. The batch's counters are added once per stage 3, not once per lookup.
// No std::function callbacks and no per-record decoding objects: the stages are what
// lets a batch overlap its memory accesses, and the per-hit work is the fused read
// (slot_read.hpp, response_in_arena.hpp). Instructions per batched hit are counted with
// callgrind (docs/benchmarking.md).
#include <algorithm>

#include "cache.hpp"
#include "response_direct.hpp"
#include "slot_read.hpp"

namespace dnsarena::cache {

namespace {

inline void prefetch_entry_lines(const std::uint8_t* p) {
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
}

}  // namespace

void Cache::lookup_responses(std::span<ResponseLookup> batch, std::uint32_t now) {
  thread_local EntryCopy copy;
  IndexPosition pos[kMaxBatch];
  std::atomic<std::uint64_t>* tagged[kMaxBatch];  // the first slot with the key's tag; nullptr: none
  std::uint64_t seen[kMaxBatch];                   // its value
  Bucket* const buckets = buckets_;
  std::uint8_t* const arena = seg_.arena();
  const std::uint64_t arena_bytes = seg_.layout().arena_bytes();
  const bool hash_overridden = static_cast<bool>(hash_override_);
  for (std::size_t first = 0; first < batch.size(); first += kMaxBatch) {
    const std::size_t n = std::min(kMaxBatch, batch.size() - first);
    ResponseLookup* b = batch.data() + first;
    // Stage 1: hash, then both bucket lines.
    for (std::size_t i = 0; i < n; ++i) {
      const CacheKey& key = *b[i].key;
      pos[i] = index_position(hash_overridden ? hash_override_(key) : key.hash(), bucket_count_);
      __builtin_prefetch(&buckets[pos[i].bucket1]);
      __builtin_prefetch(&buckets[pos[i].bucket2]);
    }
    // Stage 2: the first tag match, then its entry's lines.
    for (std::size_t i = 0; i < n; ++i) {
      tagged[i] = first_tagged_slot(pos[i], &seen[i]);
      if (tagged[i] == nullptr) continue;
      const std::uint64_t off = slot_offset(seen[i]).byte_offset();
      if (off < arena_bytes) prefetch_entry_lines(arena + off);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    // Stage 3: the fused read (the response written from the arena, then the seqlock
    // check); what it gives up on takes the copying path.
    std::uint64_t hits = 0, expired = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ResponseLookup& q = b[i];
      if (tagged[i] == nullptr) {
        q.status = LookupStatus::miss;
        q.response = {};
        continue;
      }
      const auto blob = q.key->blob();
      const FusedRead fused = read_slot_response(*tagged[i], seen[i], blob, *q.query, now, *q.options, q.out,
                                                 q.capacity, &q.response);
      if (fused == FusedRead::hit) {
        q.status = LookupStatus::hit;
        ++hits;
        continue;
      }
      q.response = {};
      if (fused == FusedRead::expired) {
        q.status = LookupStatus::expired;
        ++expired;
        continue;
      }
      LookupStatus st = LookupStatus::miss;
      switch (read_slot_entry(seen[i], blob, copy, kMaxEntryBytes)) {
        case SlotRead::match: st = hit_or_expired(*tagged[i], seen[i], now, copied_expire(copy)); break;
        case SlotRead::other:  // another key with this tag: a later slot may hold ours
          st = find_and_copy(*q.key, key_hash(*q.key), now, copy);
          break;
        case SlotRead::stale:
          count(Counter::lookup_retries);
          st = find_and_copy(*q.key, key_hash(*q.key), now, copy);
          break;
      }
      q.status = st;
      hits += st == LookupStatus::hit;
      expired += st == LookupStatus::expired;
      if (st != LookupStatus::hit) continue;
      if (write_response_direct(copy.span(), blob.size(), *q.query, now, *q.options, q.out, q.capacity, &q.response))
        continue;
      EntryReader reader(copy.span(), blob.size());
      if (reader.valid()) q.response = write_response(reader, *q.query, now, *q.options, q.out, q.capacity);
    }
    // The counters counted() adds per lookup, added once for the batch.
    count(Counter::lookups, n);
    count(Counter::hits, hits);
    count(Counter::misses, n - hits);
    if (expired != 0) count(Counter::expired_on_lookup, expired);
  }
}

}  // namespace dnsarena::cache

// The pipelined batch lookup: lookup_responses() (cache.hpp).
//
// Stages, each over the whole batch (up to kMaxBatch keys) before the next starts, so
// each one touches lines the previous one requested a whole batch earlier:
//
//   1. hash      index position of every key; prefetch both bucket lines
//   2. tags      scan both buckets (acquire loads, as find_and_copy); remember the one
//                slot whose hash tag matches and prefetch its entry (two lines: most
//                entries are 64-150 bytes and start anywhere in a line)
//   3. answer    read that slot's entry under the seqlock (read_slot_entry, the very
//                checks of find_and_copy), then write the response from the private copy
//                in one walk (write_response_direct), or write_response() when the entry
//                needs name compression or TC handling
//
// A key with no matching tag is a miss (find_and_copy would return miss on the same slot
// values). A key with two or more matching tags (about 1 in 2,000) or whose slot turned
// stale goes to find_and_copy, which reloads the slots and retries as a single lookup.
// So every lookup here returns what lookup_response() returns for the same slot values.
// NOTE: before this, the bench's batched round (key build + lookup + response) cost
// ~1,870 instructions per hit (callgrind), ~23% of them in the std::function callback,
// RecordView decoding and the name-compression table that most answers never use.
#include <algorithm>

#include "cache.hpp"
#include "response_direct.hpp"

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
  std::uint64_t tagged[kMaxBatch];       // the matching slot's value; 0: none
  std::uint8_t tagged_index[kMaxBatch];  // its slot number 0..15 over both buckets; 16+: several
  const std::uint64_t arena_bytes = seg_.layout().arena_bytes();
  for (std::size_t first = 0; first < batch.size(); first += kMaxBatch) {
    const std::size_t n = std::min(kMaxBatch, batch.size() - first);
    ResponseLookup* b = batch.data() + first;
    // Stage 1: hash, then both bucket lines.
    for (std::size_t i = 0; i < n; ++i) {
      pos[i] = index_position(key_hash(*b[i].key), bucket_count_);
      __builtin_prefetch(&buckets_[pos[i].bucket1]);
      __builtin_prefetch(&buckets_[pos[i].bucket2]);
    }
    // Stage 2: tag matches, then their entries' lines.
    for (std::size_t i = 0; i < n; ++i) {
      tagged[i] = 0;
      tagged_index[i] = 0;
      unsigned matches = 0;
      const std::uint64_t two[2] = {pos[i].bucket1, pos[i].bucket2};
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned k = 0; k < kSlotsPerBucket; ++k) {
          const std::uint64_t s = buckets_[two[h]].slots[k].load(std::memory_order_acquire);
          if (s == 0 || slot_hash_tag(s) != pos[i].hash_tag) continue;
          ++matches;
          tagged[i] = s;
          tagged_index[i] = static_cast<std::uint8_t>(h * kSlotsPerBucket + k);
          const std::uint64_t off = slot_offset(s).byte_offset();
          if (off < arena_bytes) prefetch_entry_lines(seg_.arena() + off);
        }
      if (matches > 1) tagged_index[i] = 2 * kSlotsPerBucket;
    }
    // Stage 3: copy under the seqlock, then the response.
    for (std::size_t i = 0; i < n; ++i) {
      ResponseLookup& q = b[i];
      const auto blob = q.key->blob();
      LookupStatus st = LookupStatus::miss;
      if (tagged[i] != 0 && tagged_index[i] < 2 * kSlotsPerBucket) {
        const std::uint64_t bucket = tagged_index[i] < kSlotsPerBucket ? pos[i].bucket1 : pos[i].bucket2;
        std::atomic<std::uint64_t>& slot = buckets_[bucket].slots[tagged_index[i] % kSlotsPerBucket];
        switch (read_slot_entry(tagged[i], blob, copy, kMaxEntryBytes)) {
          case SlotRead::match: st = hit_or_expired(slot, tagged[i], now, copy); break;
          case SlotRead::other: break;  // the only candidate is another key: a miss
          case SlotRead::stale:
            count(Counter::lookup_retries);
            st = find_and_copy(*q.key, key_hash(*q.key), now, copy);
            break;
        }
      } else if (tagged[i] != 0) {
        st = find_and_copy(*q.key, key_hash(*q.key), now, copy);
      }
      q.status = counted(st);
      q.response = {};
      if (st != LookupStatus::hit) continue;
      if (write_response_direct(copy.span(), blob.size(), *q.query, now, *q.options, q.out, q.capacity, &q.response))
        continue;
      EntryReader reader(copy.span(), blob.size());
      if (reader.valid()) q.response = write_response(reader, *q.query, now, *q.options, q.out, q.capacity);
    }
  }
}

}  // namespace dnsarena::cache

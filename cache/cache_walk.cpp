// SPDX-License-Identifier: GPL-3.0-or-later
// Walking every entry without a lock, for the operator tools (`dnsarena dump`, `top`,
// `flush`), and one key's footprint for the benchmark (lookup_footprint, through
// lookup's own search and slot read). Both read under the lookups' seqlock
// (read_seqlocked, slot_read.hpp); a changed generation means the slot is about to
// change and is reloaded.
#include <atomic>

#include "cache.hpp"
#include "cache_lab_hooks.hpp"
#include "relaxed_copy.hpp"
#include "slot_read.hpp"

namespace dnsarena::cache {

void Cache::for_each_entry(const std::function<void(const EntryCopy&, bool hit)>& visit, bool clear_hit_bits) {
  thread_local EntryCopy copy;
  for (std::uint64_t b = 0; b < bucket_count_; ++b) {
    for (auto& slot : buckets_[b].slots) {
      for (int attempt = 0; attempt < 8; ++attempt) {
        const std::uint64_t s = slot.load(std::memory_order_acquire);
        if (s == 0) break;
        const SlotRead read = copy_slot_entry(s, copy, kMaxEntryBytes);
        if (read == SlotRead::stale) continue;  // recycled: the slot is changing
        if (read == SlotRead::other) break;     // not a sane published entry
        if (clear_hit_bits && slot_hit(s)) {
          std::uint64_t expected = s;
          slot.compare_exchange_strong(expected, s & ~kSlotHitBit, std::memory_order_relaxed);
        }
        visit(copy, slot_hit(s));
        break;
      }
    }
  }
}

LookupFootprint Cache::lookup_footprint(const CacheKey& key) const {
  thread_local EntryCopy copy;
  const auto blob = key.blob();
  const IndexPosition pos = index_position(key_hash(key), bucket_count_);
  LookupFootprint f;
  f.buckets[0] = &buckets_[pos.bucket1];
  f.buckets[1] = &buckets_[pos.bucket2];
  // A lookup's search and validated read, copying only the header and key.
  std::uint64_t s = 0;
  unsigned retries = 0;  // counted by lookups, not here
  const auto read = [&](std::uint64_t v) { return read_slot_entry(v, blob, copy, kEntryKeyOffset + blob.size()); };
  if (find_key_slot(pos, read, &s, &retries) == nullptr) return f;
  f.entry = entry_address(slot_offset(s));
  f.entry_bytes = copy.length;
  return f;
}

}  // namespace dnsarena::cache

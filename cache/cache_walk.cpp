// SPDX-License-Identifier: GPL-3.0-or-later
// Walking every entry without a lock, for the operator tools (`dnsarena dump`, `top`,
// `flush`), and one key's footprint for the benchmark (lookup_footprint, through
// lookup's own slot read, slot_read.hpp). The copy follows lookup's seqlock rule
// (cache_read.cpp, find_and_copy): region generation before, bytes below the published
// fill, generation again after an acquire fence; a changed generation means the slot is
// about to change and is reloaded.
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
        const ArenaOffset off = slot_offset(s);
        const std::uint32_t region = region_of(off);
        if (region >= region_count_) break;  // never published by a correct writer
        const std::uint64_t g1 = regions_[region].generation.load(std::memory_order_acquire);
        if (generation_tag(g1) != slot_gen_tag(s)) continue;  // recycled: the slot is changing
        const std::size_t in_region = off.byte_offset() & (region_bytes_ - 1);
        const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
        if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) continue;
        const std::uint8_t* src = entry_address(off);
        const std::size_t len = relaxed_load_u16(src);
        const bool sane = len >= kEntryHeaderBytes + kKeyFixedBytes && in_region + len <= fill;
        if (sane) relaxed_copy_out(copy.bytes.data(), src, len);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (regions_[region].generation.load(std::memory_order_relaxed) != g1) continue;
        if (!sane) break;
        copy.length = len;
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
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
    for (const auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_acquire);
      if (s == 0 || slot_hash_tag(s) != pos.hash_tag) continue;
      // A lookup's validated read, copying only the header and key (a stale slot is
      // skipped, not retried: the benchmark's segment has no other writer).
      if (read_slot_entry(s, blob, copy, kEntryKeyOffset + blob.size()) != SlotRead::match) continue;
      f.entry = entry_address(slot_offset(s));
      f.entry_bytes = copy.length;
      return f;
    }
  }
  return f;
}

}  // namespace dnsarena::cache

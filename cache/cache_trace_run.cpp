// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet simulator's entry points (sim/fleet/cache_curve.cpp): a probe from an index
// position computed when the key's buckets were prefetched, and inserts of encoded bytes
// under a writer lock held across many of them. They run the real cache in trace order
// (a probe sees every earlier insert, an insert's reclaim evicts what a later probe would
// have hit), with the same outcomes, counters and index/arena state as probe() and
// insert_encoded() called one by one (tests/cache/trace_run_test.cpp compares them).
//
// Concurrency: probe_at is a lock-free reader like find_and_copy (cache_read.cpp): slots
// loaded acquire, the entry's words with relaxed atomic loads, then an acquire fence and
// the region's generation re-checked (the seqlock, region_table.hpp), so a copy torn by
// a recycle is never believed. insert_encoded_held REQUIRES the hold to own the writer
// lock (it checks, and skips otherwise); it calls insert_locked, as insert() does.
// FORMAT-DEPENDENT: reads the entry header (entry_format.hpp) and slots (index_slot.hpp).
#include <atomic>
#include <stdexcept>

#include "cache.hpp"
#include "cache_lab_hooks.hpp"
#include "response_in_arena.hpp"

namespace dnsarena::cache {

namespace {
enum class InPlace { stale, other, match };
}  // namespace

LookupStatus Cache::probe_at(const CacheKey& key, const IndexPosition& pos, std::uint32_t now) {
  const auto blob = key.blob();
  const std::size_t k = blob.size();
  // key_equal_in_arena compares whole words: a blob of 6 or 7 bytes (a one-letter name
  // or the root, no ECS) takes the copying probe.
  if (k < 8) return probe(key, now);
  // One slot with the key's tag, read in place under the seqlock: read_slot_entry's
  // verdicts (slot_read.hpp) without the copy of the header and key.
  auto read = [&](std::uint64_t s, std::uint32_t* expire) {
    const std::uint64_t byte_off = slot_offset(s).byte_offset();
    const auto region = static_cast<std::uint32_t>(byte_off >> region_shift_);
    if (region >= region_count_) return InPlace::other;  // never published by a correct writer
    const std::uint64_t g1 = regions_[region].generation.load(std::memory_order_acquire);
    if (generation_tag(g1) != slot_gen_tag(s)) return InPlace::stale;
    const std::size_t in_region = byte_off & (region_bytes_ - 1);
    const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
    if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) return InPlace::stale;
    const auto* w = reinterpret_cast<const std::uint64_t*>(seg_.arena() + byte_off);
    const std::uint64_t h0 = __atomic_load_n(w, __ATOMIC_RELAXED);
    const std::size_t len = h0 & 0xFFFF;
    // Every word compared lies below len, and len below the fill: a torn len cannot take
    // the compare outside the region.
    const bool match = len >= kEntryKeyOffset + k && in_region + len <= fill && key_equal_in_arena(w, blob.data(), k);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (regions_[region].generation.load(std::memory_order_relaxed) != g1) return InPlace::stale;
    *expire = static_cast<std::uint32_t>(h0 >> 32);
    return match ? InPlace::match : InPlace::other;
  };
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool retry = false;
    for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
      std::atomic<std::uint64_t>* slots = buckets_[b].slots;
#pragma GCC unroll 8
      for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
        const std::uint64_t s = slots[i].load(std::memory_order_acquire);
        if (slot_hash_tag(s) != pos.hash_tag || s == 0) continue;
        std::uint32_t expire = 0;
        const InPlace r = read(s, &expire);
        if (r == InPlace::match) {
          if (now >= expire) return counted(LookupStatus::expired);
          if (!slot_hit(s)) {
            std::uint64_t expected = s;
            slots[i].compare_exchange_strong(expected, s | kSlotHitBit, std::memory_order_relaxed);
          }
          return counted(LookupStatus::hit);
        }
        if (r == InPlace::stale) {
          retry = true;
          break;
        }
      }
      if (retry) break;
    }
    if (!retry) return counted(LookupStatus::miss);
    count(Counter::lookup_retries);
  }
  return counted(LookupStatus::miss);
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

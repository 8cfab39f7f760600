// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/cache_write.cpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Writes: insert, erase, and placing slots in the index. Every function here except
// insert()/insert_encoded()/erase() REQUIRES the writer lock.
#include <cstring>

#include "cache.hpp"
#include "robust_mutex.hpp"

namespace dnsarena::frozen2 {

std::uint64_t Cache::entry_hash_at(ArenaOffset off) const {
  const std::uint8_t* p = entry_address(off);
  const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
  if (!hash_override_) {
    // Entries in the arena were encoded from validated keys: hash the blob in place.
    const std::size_t klen =
        len > kEntryKeyOffset ? CacheKey::blob_length_unchecked(p + kEntryKeyOffset, len - kEntryKeyOffset) : 0;
    return klen ? CacheKey::hash_blob({p + kEntryKeyOffset, klen}) : 0;
  }
  CacheKey k;
  if (len <= kEntryKeyOffset || !CacheKey::from_blob({p + kEntryKeyOffset, len - kEntryKeyOffset}, k)) return 0;
  return key_hash(k);
}

Cache::SlotRef Cache::find_linked(std::span<const std::uint8_t> key_blob, std::uint64_t hash) const {
  const IndexPosition pos = index_position(hash, bucket_count_);
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (s == 0 || slot_hash_tag(s) != pos.hash_tag) continue;
      const std::uint8_t* p = entry_address(slot_offset(s));
      const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
      if (len >= kEntryKeyOffset + key_blob.size() &&
          std::memcmp(p + kEntryKeyOffset, key_blob.data(), key_blob.size()) == 0)
        return {&slot, s};
    }
  }
  return {};
}

Cache::SlotRef Cache::find_slot_of(ArenaOffset off, std::uint64_t hash) const {
  const IndexPosition pos = index_position(hash, bucket_count_);
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (s != 0 && slot_offset(s) == off) return {&slot, s};
    }
  return {};
}

void Cache::unlink(std::atomic<std::uint64_t>* slot) {
  slot->store(0, std::memory_order_release);
  hdr_.live_entries.fetch_sub(1, std::memory_order_relaxed);
}

void Cache::place(std::span<const std::uint8_t> key_blob, std::uint64_t hash, ArenaOffset off, bool* replaced) {
  const IndexPosition pos = index_position(hash, bucket_count_);
  const std::uint64_t value =
      make_slot(off, generation_tag(regions_[region_of(off)].generation.load(std::memory_order_relaxed)), pos.hash_tag);
  *replaced = false;
  if (SlotRef old = find_linked(key_blob, hash); old.slot) {
    old.slot->store(value, std::memory_order_release);
    *replaced = true;
    return;
  }
  auto load_of = [&](std::uint64_t b) {
    unsigned n = 0;
    for (auto& slot : buckets_[b].slots) n += slot.load(std::memory_order_relaxed) != 0;
    return n;
  };
  const std::uint64_t first = load_of(pos.bucket2) < load_of(pos.bucket1) ? pos.bucket2 : pos.bucket1;
  for (const std::uint64_t b : {first, first == pos.bucket1 ? pos.bucket2 : pos.bucket1})
    for (auto& slot : buckets_[b].slots)
      if (slot.load(std::memory_order_relaxed) == 0) {
        slot.store(value, std::memory_order_release);
        hdr_.live_entries.fetch_add(1, std::memory_order_relaxed);
        return;
      }
  // Both buckets full. First try one cuckoo step: move a resident whose other bucket has
  // room, publishing the copy there before its old slot is reused, so a reader never
  // finds a wrong entry (at worst it misses the moved one for an instant).
  // NOTE: greedy two-choice placement at load 0.8 evicted early on ~25 of 10^6 fills and
  // on 2.3% of inserts into a full cache (4M entries); this step removes most of those.
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t resident = slot.load(std::memory_order_relaxed);
      const IndexPosition rp = index_position(entry_hash_at(slot_offset(resident)), bucket_count_);
      const std::uint64_t alt = rp.bucket1 == b ? rp.bucket2 : rp.bucket1;
      if (alt == b) continue;
      for (auto& free_slot : buckets_[alt].slots)
        if (free_slot.load(std::memory_order_relaxed) == 0) {
          free_slot.store(resident, std::memory_order_release);
          slot.store(value, std::memory_order_release);
          hdr_.live_entries.fetch_add(1, std::memory_order_relaxed);
          count(Counter::index_displacements);
          return;
        }
    }
  // No room one step away: evict the slot whose entry is oldest in the log.
  const std::uint32_t tail = tail_region();
  std::atomic<std::uint64_t>* victim = nullptr;
  std::uint32_t victim_age = ~0u;
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& slot : buckets_[b].slots) {
      const std::uint32_t r = region_of(slot_offset(slot.load(std::memory_order_relaxed)));
      const std::uint32_t age = (r + region_count_ - tail) % region_count_;
      if (age < victim_age) {
        victim_age = age;
        victim = &slot;
      }
    }
  unlink(victim);
  count(Counter::conflict_evictions);
  victim->store(value, std::memory_order_release);
  hdr_.live_entries.fetch_add(1, std::memory_order_relaxed);
}

InsertStatus Cache::insert(const CacheKey& key, const Answer& answer, std::uint32_t now) {
  // The index lines are requested first, so encoding overlaps their trip from memory.
  const std::uint64_t hash = key_hash(key);
  prefetch_buckets(hash);
  if (encode_entry(key, answer, now, scratch_) == 0) {
    count(Counter::rejected_inserts);
    return InsertStatus::rejected;
  }
  return insert_hashed(key, hash, scratch_, now);
}

InsertStatus Cache::insert_encoded(const CacheKey& key, std::span<const std::uint8_t> padded, std::uint32_t now) {
  return insert_hashed(key, key_hash(key), padded, now);
}

InsertStatus Cache::insert_hashed(const CacheKey& key, std::uint64_t hash, std::span<const std::uint8_t> padded,
                                  std::uint32_t now) {
  if (padded.empty() || padded.size() % kEntryAlignment != 0 || padded.size() > region_bytes_) {
    count(Counter::rejected_inserts);
    return InsertStatus::rejected;
  }
  bool replaced = false;
  {
    RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); });
    if (now > hdr_.clock_high_water.load(std::memory_order_relaxed))
      hdr_.clock_high_water.store(now, std::memory_order_relaxed);
    if (hdr_.live_entries.load(std::memory_order_relaxed) >= seg_.layout().max_entries &&
        !find_linked(key.blob(), hash).slot)
      make_room_for_one(now);
    const ArenaOffset off = append(padded, now);
    place(key.blob(), hash, off, &replaced);
  }
  count(Counter::inserts);
  if (replaced) count(Counter::replaces);
  return replaced ? InsertStatus::replaced : InsertStatus::inserted;
}

bool Cache::erase(const CacheKey& key) {
  RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); });
  SlotRef ref = find_linked(key.blob(), key_hash(key));
  if (!ref.slot) return false;
  unlink(ref.slot);
  return true;
}

void Cache::repair_now() {
  RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); });
  repair();
}

void Cache::with_writer_lock(const std::function<void()>& fn) {
  RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); });
  fn();
}

}  // namespace dnsarena::frozen2

// SPDX-License-Identifier: GPL-3.0-or-later
// Writes: insert, erase, and placing slots in the index. Every function here except
// insert()/insert_encoded()/erase() REQUIRES the writer lock.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "cache.hpp"

#include "failpoint.hpp"
#include "robust_mutex.hpp"
#include "writer_counter.hpp"

namespace dnsarena::cache {

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
  // A zero slot's offset is the null offset, never an entry's: no separate test for it.
  static_assert(ArenaOffset{}.raw() == 0, "slot 0 holds the null offset");
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
#pragma GCC unroll 8
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (slot_offset(s) == off) return {&slot, s};
    }
  return {};
}

void Cache::unlink(std::atomic<std::uint64_t>* slot) {
  slot->store(0, std::memory_order_release);
  writer_sub(hdr_.live_entries, 1);
}

Cache::BucketScan Cache::scan_buckets(std::span<const std::uint8_t> key_blob, std::uint64_t hash) const {
  const IndexPosition pos = index_position(hash, bucket_count_);
  BucketScan scan;
  // Unrolled, with branches: a branch-free scan building bit masks of free and matching
  // slots (setcc, shifts by the slot number) costs about twice the instructions a slot.
  for (unsigned h = 0; h < 2; ++h) {
    Bucket& bucket = buckets_[h == 0 ? pos.bucket1 : pos.bucket2];
#pragma GCC unroll 8
    for (auto& slot : bucket.slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (s == 0) {
        if (scan.free[h] == nullptr) scan.free[h] = &slot;
        continue;
      }
      ++scan.used[h];
      if (slot_hash_tag(s) != pos.hash_tag || scan.linked.slot != nullptr) continue;
      const std::uint8_t* p = entry_address(slot_offset(s));
      const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
      if (len >= kEntryKeyOffset + key_blob.size() &&
          std::memcmp(p + kEntryKeyOffset, key_blob.data(), key_blob.size()) == 0)
        scan.linked = {&slot, s};
    }
  }
  return scan;
}

void Cache::place(const BucketScan& scan, std::uint64_t hash, ArenaOffset off, bool* replaced) {
  const IndexPosition pos = index_position(hash, bucket_count_);
  const std::uint64_t value =
      make_slot(off, generation_tag(regions_[region_of(off)].generation.load(std::memory_order_relaxed)), pos.hash_tag);
  *replaced = false;
  if (scan.linked.slot != nullptr) {
    scan.linked.slot->store(value, std::memory_order_release);
    failpoint(FailStep::place_replaced);
    *replaced = true;
    return;
  }
  // The less loaded bucket's first free slot (bucket 1 on a tie), else the other's.
  const unsigned first = scan.used[1] < scan.used[0] ? 1 : 0;
  if (std::atomic<std::uint64_t>* slot = scan.free[first] ? scan.free[first] : scan.free[1 - first]) {
    slot->store(value, std::memory_order_release);
    failpoint(FailStep::place_linked);
    writer_add(hdr_.live_entries, 1);
    return;
  }
  // Both buckets full. First try one cuckoo step: move a resident whose other bucket has
  // room. The new entry takes the resident's slot first, then the resident is linked
  // from its other bucket: a reader may miss the resident for an instant, and a writer
  // killed between the two stores leaves it unlinked (a miss; repair() recounts). The
  // other order linked one entry from two slots in between, and a crash there left a
  // duplicate that erase and reclaim unlinked only once (an erased answer still served,
  // a slot into a freed region).
  // Without this step, greedy two-choice placement at load 0.8 evicts early on a few
  // percent of inserts into a full cache; with it, such evictions are rare.
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2})
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t resident = slot.load(std::memory_order_relaxed);
      const IndexPosition rp = index_position(entry_hash_at(slot_offset(resident)), bucket_count_);
      const std::uint64_t alt = rp.bucket1 == b ? rp.bucket2 : rp.bucket1;
      if (alt == b) continue;
      for (auto& free_slot : buckets_[alt].slots)
        if (free_slot.load(std::memory_order_relaxed) == 0) {
          slot.store(value, std::memory_order_release);
          failpoint(FailStep::displace_new_linked);
          free_slot.store(resident, std::memory_order_release);
          failpoint(FailStep::displace_done);
          writer_add(hdr_.live_entries, 1);
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
  failpoint(FailStep::conflict_unlinked);
  count(Counter::conflict_evictions);
  victim->store(value, std::memory_order_release);
  writer_add(hdr_.live_entries, 1);
}

InsertStatus Cache::insert(const CacheKey& key, const Answer& answer, std::uint32_t now) {
  // The index lines are requested first, so encoding overlaps their trip from memory.
  const std::uint64_t hash = key_hash(key);
  prefetch_buckets(hash);
  std::size_t padded = 0;
  if (encode_entry_into(key, answer, now, scratch_, &padded) == 0) {
    count(Counter::rejected_inserts);
    return InsertStatus::rejected;
  }
  return insert_hashed(key, hash, {scratch_.data(), padded}, now);
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
    std::string error;
    RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); }, writer_lock_timeout_, &error);
    if (!lock.owns()) {
      writer_lock_unavailable(lock.result(), error);
      return InsertStatus::skipped;
    }
    insert_locked(key.blob(), hash, padded, now, &replaced);
  }
  count(Counter::inserts);
  if (replaced) count(Counter::replaces);
  return replaced ? InsertStatus::replaced : InsertStatus::inserted;
}

void Cache::insert_locked(std::span<const std::uint8_t> key_blob, std::uint64_t hash,
                          std::span<const std::uint8_t> padded, std::uint32_t now, bool* replaced) {
  if (now > hdr_.clock_high_water.load(std::memory_order_relaxed))
    hdr_.clock_high_water.store(now, std::memory_order_relaxed);
  // One pass over the key's buckets serves both the room check and the placement, unless
  // a reclaim (making room, or advancing the head) changed the index in between.
  const std::uint64_t reclaims = reclaims_;
  BucketScan scan = scan_buckets(key_blob, hash);
  if (hdr_.live_entries.load(std::memory_order_relaxed) >= seg_.layout().max_entries && scan.linked.slot == nullptr)
    make_room_for_one(now);
  const ArenaOffset off = append(padded, now);
  if (reclaims_ != reclaims) scan = scan_buckets(key_blob, hash);
  place(scan, hash, off, replaced);
}

void Cache::writer_lock_unavailable(LockResult r, const std::string& error) {
  count(Counter::writer_lock_unavailable);
  if (r == LockResult::timed_out) return;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "dnsarena: ERROR: segment '%s': %s%s%s; answers are served without caching them\n",
                 seg_.name().c_str(), describe(r), error.empty() ? "" : ": ", error.c_str());
}

bool Cache::erase(const CacheKey& key) {
  std::string error;
  RobustLockGuard lock(&hdr_.writer_lock, [this] { repair(); }, writer_lock_timeout_, &error);
  if (!lock.owns()) {
    writer_lock_unavailable(lock.result(), error);
    return false;
  }
  SlotRef ref = find_linked(key.blob(), key_hash(key));
  if (!ref.slot) return false;
  ref.slot->store(0, std::memory_order_release);
  failpoint(FailStep::erase_unlinked);
  writer_sub(hdr_.live_entries, 1);
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

}  // namespace dnsarena::cache

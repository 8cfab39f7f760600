// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/log_arena.cpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// The log-structured arena: append, advance the head, reclaim the oldest region with a
// second chance, and repair after a writer died. Every function REQUIRES the writer lock.
//
// The regions form a ring used in order. head_and_free packs the head region (where
// appends go) and the number of free regions, which are always the ones right after the
// head; the tail (oldest region holding entries) is therefore head + 1 + free (mod count).
//
//   ring:  [ tail ... sealed regions ... | head | free | free ]  -> wraps around
//
// Invariant after every append: free >= 1, so a reclaim always has a whole free region
// to copy second-chance survivors into (a region's survivors never exceed a region).
//
// NOTE: survivors are copied before the region is freed, and the region's bytes are not
// touched by the walk, so readers keep hitting its entries until the generation bump.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "cache.hpp"

#include "failpoint.hpp"
#include "relaxed_copy.hpp"

namespace dnsarena::frozen3 {

std::uint32_t Cache::tail_region() const {
  const std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
  return static_cast<std::uint32_t>((std::uint64_t{head_of(hf)} + 1 + free_of(hf)) % region_count_);
}

bool Cache::append_without_reclaim(std::span<const std::uint8_t> padded, ArenaOffset* off) {
  std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
  std::uint32_t head = head_of(hf);
  std::uint32_t fill = regions_[head].fill.load(std::memory_order_relaxed);
  if (fill + padded.size() > region_bytes_) {
    if (free_of(hf) == 0) return false;
    head = (head + 1) % region_count_;
    hdr_.head_and_free.store(pack_head_free(head, free_of(hf) - 1), std::memory_order_relaxed);
    failpoint(FailStep::head_advanced);
    fill = regions_[head].fill.load(std::memory_order_relaxed);  // 0: freed regions are empty
  }
  const std::uint64_t byte_off = std::uint64_t{head} * region_bytes_ + fill;
  // Seqlock writer side: the copy-in must not be ordered before the generation bump that
  // recycled this region. When another process (or thread) did that bump, its own
  // release fence does not order our stores: the C++ model pairs a reader's acquire
  // fence only with a release fence sequenced before the store the reader saw. The bump
  // happens-before this point through the writer lock, so this fence carries it to every
  // reader that copies one of the bytes below. A compiler barrier on x86 (TSO).
  std::atomic_thread_fence(std::memory_order_release);
  relaxed_copy_in(seg_.arena() + byte_off, padded.data(), padded.size());
  failpoint(FailStep::append_copied);
  // Bytes first, fill next, the index slot last (by the caller, with release).
  regions_[head].fill.store(fill + static_cast<std::uint32_t>(padded.size()), std::memory_order_release);
  failpoint(FailStep::append_published);
  hdr_.bytes_in_use.fetch_add(padded.size(), std::memory_order_relaxed);
  *off = ArenaOffset::from_byte_offset(byte_off);
  return true;
}

void Cache::advance_head(std::uint32_t now) {
  // Second chances are bounded: after one whole turn of the ring without freeing enough,
  // every entry has had its chance (readers may be re-marking them as fast as reclaim
  // clears the bits), and reclaim evicts without them. The guard below then cannot trip:
  // a reclaim without second chances frees its region.
  for (std::uint32_t guard = 0; free_of(hdr_.head_and_free.load(std::memory_order_relaxed)) < 2; ++guard) {
    if (guard > 2 * region_count_ + 2) throw std::logic_error("advance_head: reclaim made no progress");
    reclaim_tail(now, guard < region_count_);
  }
  const std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
  hdr_.head_and_free.store(pack_head_free((head_of(hf) + 1) % region_count_, free_of(hf) - 1),
                           std::memory_order_relaxed);
  failpoint(FailStep::head_advanced);
}

ArenaOffset Cache::append(std::span<const std::uint8_t> padded, std::uint32_t now) {
  const std::uint32_t head = head_of(hdr_.head_and_free.load(std::memory_order_relaxed));
  if (regions_[head].fill.load(std::memory_order_relaxed) + padded.size() > region_bytes_) advance_head(now);
  ArenaOffset off;
  // Cannot fail: the head had room or is a freshly freed region, and padded <= region.
  if (!append_without_reclaim(padded, &off)) throw std::logic_error("append: no room after advancing the head");
  return off;
}

void Cache::reclaim_tail(std::uint32_t now, bool second_chances) {
  reclaim_region(tail_region(), now, second_chances);
}

void Cache::reclaim_region(std::uint32_t r, std::uint32_t now, bool second_chances) {
  hdr_.reclaiming_region.store(r, std::memory_order_relaxed);
  const std::uint32_t fill = regions_[r].fill.load(std::memory_order_relaxed);
  const std::uint64_t region_base = std::uint64_t{r} * region_bytes_;
  // Pass 1: walk the region sequentially, hash every entry's key and prefetch its two
  // buckets, so pass 2 finds most index lines in cache instead of one memory round trip
  // per entry. NOTE: measured on 1 MiB regions of the seed mix (~7,000 entries).
  bool intact = true;
  reclaim_scratch_.clear();
  for (std::uint32_t pos = 0; pos < fill;) {
    const std::uint8_t* p = seg_.arena() + region_base + pos;
    const std::uint32_t len = std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8);
    if (len < kEntryHeaderBytes + kKeyFixedBytes || pos + len > fill) {
      intact = false;
      break;
    }
    const std::uint64_t hash = entry_hash_at(ArenaOffset::from_byte_offset(region_base + pos));
    prefetch_buckets(hash);
    reclaim_scratch_.push_back({pos, hash});
    pos += static_cast<std::uint32_t>(padded_entry_size(len));
  }
  // Pass 2: expire, give a second chance, or evict each entry still linked.
  std::size_t done = 0;
  for (const PendingEntry& pending : reclaim_scratch_) {
    failpoint(FailStep::reclaim_entry, done);
    ++done;
    const std::uint8_t* p = seg_.arena() + region_base + pending.pos;
    const std::uint32_t len = std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8);
    const std::uint32_t padded = static_cast<std::uint32_t>(padded_entry_size(len));
    const ArenaOffset off = ArenaOffset::from_byte_offset(region_base + pending.pos);
    const SlotRef ref = find_slot_of(off, pending.hash);
    if (ref.slot) {
      std::uint32_t expire;
      std::memcpy(&expire, p + kEntryExpireOffset, 4);
      ArenaOffset moved;
      if (now >= expire) {
        unlink(ref.slot);
        count(Counter::expirations);
      } else if (second_chances && slot_hit(ref.value) && append_without_reclaim({p, padded}, &moved)) {
        const std::uint32_t gen = generation_tag(regions_[region_of(moved)].generation.load(std::memory_order_relaxed));
        ref.slot->store(make_slot(moved, gen, slot_hash_tag(ref.value)), std::memory_order_release);
        count(Counter::second_chances);
      } else {
        unlink(ref.slot);
        count(Counter::evictions);
      }
    }
  }
  if (!intact) {
    // A damaged region (should never happen): find every slot pointing into it the slow way.
    for (std::uint64_t b = 0; b < bucket_count_; ++b)
      for (auto& slot : buckets_[b].slots) {
        const std::uint64_t s = slot.load(std::memory_order_relaxed);
        if (s != 0 && region_of(slot_offset(s)) == r) {
          unlink(&slot);
          count(Counter::evictions);
        }
      }
  }
  hdr_.bytes_in_use.fetch_sub(fill, std::memory_order_relaxed);
  regions_[r].fill.store(0, std::memory_order_relaxed);
  failpoint(FailStep::reclaim_region_emptied);
  // From here on readers holding an old slot into r see a new generation and retry.
  // The release fence after the bump keeps every later store into r (when it is the head
  // again) from being ordered before it: a reader whose copy saw such a store then sees
  // the new generation after its own acquire fence (fence-to-fence synchronisation).
  regions_[r].generation.fetch_add(1, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_release);
  failpoint(FailStep::reclaim_generation_bumped);
  const std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
  hdr_.head_and_free.store(pack_head_free(head_of(hf), free_of(hf) + 1), std::memory_order_relaxed);
  hdr_.reclaiming_region.store(kNoRegion, std::memory_order_relaxed);
}

void Cache::make_room_for_one(std::uint32_t now) {
  for (std::uint32_t guard = 0; hdr_.live_entries.load(std::memory_order_relaxed) >= seg_.layout().max_entries; ++guard) {
    if (guard > 2 * region_count_ + 2) throw std::logic_error("make_room_for_one: reclaim made no progress");
    if (free_of(hdr_.head_and_free.load(std::memory_order_relaxed)) == region_count_ - 1)
      advance_head(now);  // every entry is in the head: seal it so it can be reclaimed
    reclaim_tail(now, guard < region_count_);  // bounded second chances, as in advance_head
  }
}

void Cache::repair() {
  failpoint(FailStep::repair_begin);
  hdr_.repairs.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t now = static_cast<std::uint32_t>(hdr_.clock_high_water.load(std::memory_order_relaxed));
  // 1. Slots the dead writer may have left wrong: drop them (at worst a miss, never a
  //    stale or wrong read, never a slot that reclaim or erase would miss).
  drop_bad_slots();
  // 2. A reclaim the dead writer started: finish it if its region is still the tail and
  //    not yet counted free; otherwise it had finished and only the marker was left.
  const std::uint64_t r = hdr_.reclaiming_region.load(std::memory_order_relaxed);
  if (r != kNoRegion) {
    const std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
    if (r < region_count_ && r == tail_region() && free_of(hf) < region_count_ - 1 && r != head_of(hf))
      reclaim_region(static_cast<std::uint32_t>(r), now, true);
    hdr_.reclaiming_region.store(kNoRegion, std::memory_order_relaxed);
  }
  // 3. Counters the dead writer may have left one step behind: recount them.
  std::uint64_t live = 0;
  for (std::uint64_t b = 0; b < bucket_count_; ++b)
    for (auto& slot : buckets_[b].slots) live += slot.load(std::memory_order_relaxed) != 0;
  hdr_.live_entries.store(live, std::memory_order_relaxed);
  std::uint64_t in_use = 0;
  for (std::uint32_t i = 0; i < region_count_; ++i) in_use += regions_[i].fill.load(std::memory_order_relaxed);
  hdr_.bytes_in_use.store(in_use, std::memory_order_relaxed);
}

std::uint64_t Cache::drop_bad_slots() {
  const std::uint64_t hf = hdr_.head_and_free.load(std::memory_order_relaxed);
  const std::uint32_t head = head_of(hf) % region_count_;
  const std::uint32_t nfree = std::min(free_of(hf), region_count_ - 1);
  std::vector<bool> is_free(region_count_, false);
  for (std::uint32_t i = 1; i <= nfree; ++i) is_free[(head + i) % region_count_] = true;
  const std::uint64_t arena_bytes = std::uint64_t{region_count_} * region_bytes_;
  std::uint64_t dropped = 0;
  auto drop = [&](std::atomic<std::uint64_t>& slot) {
    slot.store(0, std::memory_order_release);
    ++dropped;
  };
  // Pass 1: every slot must point at a whole entry below its region's fill, in a used
  // region, carry that region's generation tag and the key's hash tag, and sit in one of
  // the key's two buckets.
  for (std::uint64_t b = 0; b < bucket_count_; ++b)
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (s == 0) continue;
      const ArenaOffset off = slot_offset(s);
      if (off.byte_offset() >= arena_bytes) {
        drop(slot);
        continue;
      }
      const std::uint32_t r = region_of(off);
      const std::uint64_t in_region = off.byte_offset() & (region_bytes_ - 1);
      const std::uint32_t fill = regions_[r].fill.load(std::memory_order_relaxed);
      if (is_free[r] || in_region + kEntryHeaderBytes + kKeyFixedBytes > fill ||
          slot_gen_tag(s) != generation_tag(regions_[r].generation.load(std::memory_order_relaxed))) {
        drop(slot);
        continue;
      }
      const std::uint8_t* p = entry_address(off);
      const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
      if (len < kEntryHeaderBytes + kKeyFixedBytes || in_region + len > fill) {
        drop(slot);
        continue;
      }
      const IndexPosition pos = index_position(entry_hash_at(off), bucket_count_);
      if ((b != pos.bucket1 && b != pos.bucket2) || slot_hash_tag(s) != pos.hash_tag) drop(slot);
    }
  // Pass 2: one slot per key. A displacement cut between its two stores (format 2 and
  // older) left one entry linked twice; erase and reclaim would unlink only one copy.
  // Keep the copy find_linked() finds first (the one they act on), drop the others.
  for (std::uint64_t b = 0; b < bucket_count_; ++b)
    for (auto& slot : buckets_[b].slots) {
      const std::uint64_t s = slot.load(std::memory_order_relaxed);
      if (s == 0) continue;
      const ArenaOffset off = slot_offset(s);
      const std::uint8_t* p = entry_address(off);
      const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
      const std::size_t klen = CacheKey::blob_length_unchecked(p + kEntryKeyOffset, len - kEntryKeyOffset);
      if (klen == 0 || find_linked({p + kEntryKeyOffset, klen}, entry_hash_at(off)).slot != &slot) drop(slot);
    }
  return dropped;
}

}  // namespace dnsarena::frozen3

// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/cache_read.cpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Lock-free reads: lookup, batched lookup, statistics, stat-slot claiming.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "cache.hpp"
#include "relaxed_copy.hpp"

namespace dnsarena::frozen3 {

std::uint32_t wall_clock_now() { return static_cast<std::uint32_t>(std::time(nullptr)); }

namespace {

bool pid_alive(std::uint32_t pid) { return pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

StatSlot* claim_slot(Segment& seg, SlotRole role, std::uint64_t worker_index, bool* owned) {
  StatSlot* slots = seg.stat_slots();
  const std::uint32_t n = seg.layout().stat_slots;
  const auto me = static_cast<std::uint32_t>(::getpid());
  // role, claimed_unix and worker_index are plain fields (the format), but another
  // claimant may read them in pass 0 while we write them: access them through relaxed
  // atomic_refs so that race is defined (a stale value only costs a worse slot choice;
  // the CAS on owner_pid decides who owns the slot).
  auto take = [&](StatSlot& s) {
    std::atomic_ref<std::uint32_t>(s.role).store(static_cast<std::uint32_t>(role), std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(s.claimed_unix)
        .store(static_cast<std::uint64_t>(std::time(nullptr)), std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(s.worker_index).store(worker_index, std::memory_order_relaxed);
    *owned = true;
    return &s;
  };
  // A worker with an index prefers the slot its predecessor used, so per-worker figures
  // survive restarts; otherwise the first never-used slot, else one of a dead process.
  // The last slot is never owned (stat_slots.hpp): it is where sharers count.
  const std::uint32_t ownable = n > 1 ? n - 1 : 0;
  for (int pass = 0; pass < 3; ++pass) {
    for (std::uint32_t i = 0; i < ownable; ++i) {
      StatSlot& s = slots[i];
      std::uint32_t owner = s.owner_pid.load(std::memory_order_relaxed);
      if (pass == 0 &&
          !(role == SlotRole::worker &&
            std::atomic_ref<std::uint32_t>(s.role).load(std::memory_order_relaxed) ==
                static_cast<std::uint32_t>(SlotRole::worker) &&
            std::atomic_ref<std::uint64_t>(s.worker_index).load(std::memory_order_relaxed) == worker_index &&
            owner != 0 && !pid_alive(owner)))
        continue;
      if (pass == 1 && owner != 0) continue;
      if (pass == 2 && (owner == 0 || pid_alive(owner))) continue;
      if (s.owner_pid.compare_exchange_strong(owner, me, std::memory_order_acq_rel)) return take(s);
    }
  }
  // Every ownable slot is held by a live process: share the last one, which nobody owns,
  // so every process counting into it uses atomic adds and no increment is lost.
  *owned = false;
  return &slots[n - 1];
}

}  // namespace

Cache::Cache(Segment& segment, SlotRole role, std::uint64_t worker_index)
    : seg_(segment),
      hdr_(segment.header()),
      regions_(segment.regions()),
      buckets_(segment.buckets()),
      bucket_count_(segment.layout().bucket_count),
      region_bytes_(segment.layout().region_bytes),
      region_shift_(static_cast<std::uint32_t>(__builtin_ctz(segment.layout().region_bytes))),
      region_count_(segment.layout().region_count) {
  slot_ = claim_slot(seg_, role, worker_index, &owns_slot_);
  scratch_.reserve(4096);
}

Cache::~Cache() {
  // The slot keeps its counters; pid 0 marks it free for the next process.
  if (owns_slot_) slot_->owner_pid.store(0, std::memory_order_release);
}

LookupStatus Cache::find_and_copy(const CacheKey& key, std::uint64_t hash, std::uint32_t now, EntryCopy& out,
                                  std::size_t copy_limit) {
  const IndexPosition pos = index_position(hash, bucket_count_);
  // Both buckets' lines are requested before either is scanned, so a key that lives in
  // its second bucket costs one memory round trip for the index, not two.
  __builtin_prefetch(&buckets_[pos.bucket2]);
  const auto blob = key.blob();
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool retry = false;
    for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
      Bucket& bucket = buckets_[b];
      for (unsigned i = 0; i < kSlotsPerBucket && !retry; ++i) {
        const std::uint64_t s = bucket.slots[i].load(std::memory_order_acquire);
        if (s == 0 || slot_hash_tag(s) != pos.hash_tag) continue;
        const ArenaOffset off = slot_offset(s);
        const std::uint64_t byte_off = off.byte_offset();
        const std::uint32_t region = static_cast<std::uint32_t>(byte_off >> region_shift_);
        if (region >= region_count_) continue;  // never published by a correct writer
        const std::uint64_t g1 = regions_[region].generation.load(std::memory_order_acquire);
        if (generation_tag(g1) != slot_gen_tag(s)) {
          retry = true;  // the region was recycled: the slot is about to change
          break;
        }
        // Only bytes below the published fill are complete in this generation (the fill
        // is stored with release after the copy-in). A slot above it is stale: its
        // region was recycled under us and the tag matches again; reload the slot.
        const std::size_t in_region = byte_off & (region_bytes_ - 1);
        const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
        if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) {
          retry = true;
          break;
        }
        const std::uint8_t* src = entry_address(off);
        std::size_t len = relaxed_load_u16(src);
        const bool sane = len >= kEntryHeaderBytes + kKeyFixedBytes && in_region + len <= fill;
        if (sane) relaxed_copy_out(out.bytes.data(), src, std::min(len, copy_limit));
        std::atomic_thread_fence(std::memory_order_acquire);
        if (regions_[region].generation.load(std::memory_order_relaxed) != g1) {
          retry = true;
          break;
        }
        if (!sane) continue;
        // The copy is now a consistent snapshot of a published entry.
        const std::size_t klen = blob.size();
        if (len < kEntryKeyOffset + klen ||
            std::memcmp(out.bytes.data() + kEntryKeyOffset, blob.data(), klen) != 0)
          continue;  // same tag, other key
        out.length = len;
        std::uint32_t expire;
        std::memcpy(&expire, out.bytes.data() + kEntryExpireOffset, 4);
        if (now >= expire) return LookupStatus::expired;
        if (!slot_hit(s)) {
          std::uint64_t expected = s;
          bucket.slots[i].compare_exchange_strong(expected, s | kSlotHitBit, std::memory_order_relaxed);
        }
        return LookupStatus::hit;
      }
      if (retry) break;
    }
    if (!retry) return LookupStatus::miss;
    count(Counter::lookup_retries);
  }
  return LookupStatus::miss;
}

LookupStatus Cache::counted(LookupStatus st) {
  count(Counter::lookups);
  count(st == LookupStatus::hit ? Counter::hits : Counter::misses);
  if (st == LookupStatus::expired) count(Counter::expired_on_lookup);
  return st;
}

LookupStatus Cache::lookup(const CacheKey& key, std::uint32_t now, EntryCopy& out) {
  return counted(find_and_copy(key, key_hash(key), now, out));
}

void Cache::prefetch_entries(const IndexPosition& pos) const {
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
    for (unsigned k = 0; k < kSlotsPerBucket; ++k) {
      const std::uint64_t s = buckets_[b].slots[k].load(std::memory_order_relaxed);
      if (s != 0 && slot_hash_tag(s) == pos.hash_tag) {
        const ArenaOffset off = slot_offset(s);
        if (off.byte_offset() < seg_.layout().arena_bytes()) __builtin_prefetch(entry_address(off));
      }
    }
  }
}

void Cache::prefetch_entries_of(const CacheKey& key) const {
  prefetch_entries(index_position(key_hash(key), bucket_count_));
}

LookupStatus Cache::probe(const CacheKey& key, std::uint32_t now) {
  thread_local EntryCopy copy;
  const std::size_t head_and_key = kEntryKeyOffset + key.blob().size();
  return counted(find_and_copy(key, key_hash(key), now, copy, head_and_key));
}

ResponseResult Cache::lookup_response(const CacheKey& key, const QueryInfo& query, std::uint32_t now,
                                      const ResponseOptions& options, std::uint8_t* out, std::size_t capacity,
                                      LookupStatus* status) {
  thread_local EntryCopy copy;
  const LookupStatus st = lookup(key, now, copy);
  if (status) *status = st;
  if (st != LookupStatus::hit) return {};
  EntryReader reader(copy.span(), key.blob().size());
  if (!reader.valid()) return {};
  return write_response(reader, query, now, options, out, capacity);
}

void Cache::lookup_batch(const CacheKey* const* keys, std::size_t n, std::uint32_t now,
                         const std::function<void(std::size_t, LookupStatus, const EntryCopy&)>& on_result) {
  thread_local EntryCopy copy;
  std::uint64_t hashes[kMaxBatch];
  IndexPosition pos[kMaxBatch];
  n = std::min(n, kMaxBatch);
  // Stage 1: both buckets of every key.
  for (std::size_t i = 0; i < n; ++i) {
    hashes[i] = key_hash(*keys[i]);
    pos[i] = index_position(hashes[i], bucket_count_);
    __builtin_prefetch(&buckets_[pos[i].bucket1]);
    __builtin_prefetch(&buckets_[pos[i].bucket2]);
  }
  // Stage 2: the first line of every candidate entry.
  for (std::size_t i = 0; i < n; ++i) prefetch_entries(pos[i]);
  // Stage 3: the real lookups, now hitting the cache.
  for (std::size_t i = 0; i < n; ++i) {
    const LookupStatus st = counted(find_and_copy(*keys[i], hashes[i], now, copy));
    on_result(i, st, copy);
  }
}

CacheStats Cache::stats() const {
  CacheStats st;
  const SegmentLayout& l = seg_.layout();
  st.live_entries = hdr_.live_entries.load(std::memory_order_relaxed);
  st.max_entries = l.max_entries;
  st.bytes_in_use = hdr_.bytes_in_use.load(std::memory_order_relaxed);
  st.arena_bytes = l.arena_bytes();
  st.index_bytes = l.bucket_count * sizeof(Bucket);
  st.fixed_bytes = l.index_offset;  // header + stat slots + region table (+ alignment)
  st.segment_bytes = l.total_bytes;
  st.repairs = hdr_.repairs.load(std::memory_order_relaxed);
  const StatSlot* slots = seg_.stat_slots();
  for (std::uint32_t i = 0; i < l.stat_slots; ++i)
    for (std::size_t c = 0; c < kCounterCount; ++c) st.counters[c] += slots[i].counters[c].load(std::memory_order_relaxed);
  return st;
}

}  // namespace dnsarena::frozen3

// SPDX-License-Identifier: GPL-3.0-or-later
// Lock-free reads: lookup, batched lookup, statistics, stat-slot claiming.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "cache.hpp"
#include "response_direct.hpp"
#include "slot_read.hpp"

namespace dnsarena::cache {

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
  std::uint64_t s = 0;
  unsigned retries = 0;
  std::atomic<std::uint64_t>* slot = find_key_slot(
      pos, [&](std::uint64_t v) __attribute__((always_inline)) { return read_slot_entry(v, blob, out, copy_limit); },
      &s, &retries);
  if (retries != 0) count(Counter::lookup_retries, retries);
  return slot != nullptr ? hit_or_expired(*slot, s, now, copied_expire(out)) : LookupStatus::miss;
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

LookupStatus Cache::peek(const CacheKey& key, std::uint32_t now, EntryCopy& out) {
  return find_and_copy(key, key_hash(key), now, out);
}

void Cache::prefetch_entries(const IndexPosition& pos) const {
  const std::uint64_t arena_bytes = seg_.layout().arena_bytes();
  const auto prefetch = [&](std::atomic<std::uint64_t>&, std::uint64_t s) __attribute__((always_inline)) {
    const ArenaOffset off = slot_offset(s);
    if (off.byte_offset() < arena_bytes) __builtin_prefetch(entry_address(off));
    return false;  // every tagged slot's entry
  };
  for_each_tagged_slot<std::memory_order_relaxed>(pos, prefetch);
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
  // The fused read on the first slot with the key's tag (what find_and_copy reads
  // first); the copying path for anything it gives up on.
  const IndexPosition pos = index_position(key_hash(key), bucket_count_);
  __builtin_prefetch(&buckets_[pos.bucket2]);
  std::uint64_t s = 0;
  if (std::atomic<std::uint64_t>* slot = first_tagged_slot(pos, &s)) {
    std::atomic_thread_fence(std::memory_order_acquire);  // the slot load ordered before the entry's, as acquire
    ResponseResult fused;
    switch (read_slot_response(*slot, s, key.blob(), query, now, options, out, capacity, &fused)) {
      case FusedRead::hit:
        if (status) *status = LookupStatus::hit;
        counted(LookupStatus::hit);
        return fused;
      case FusedRead::expired:
        if (status) *status = LookupStatus::expired;
        counted(LookupStatus::expired);
        return {};
      case FusedRead::fallback: break;
    }
  } else {
    // No slot with the key's tag: a miss, as find_and_copy would say on these slot values.
    if (status) *status = LookupStatus::miss;
    counted(LookupStatus::miss);
    return {};
  }
  thread_local EntryCopy copy;
  const LookupStatus st = lookup(key, now, copy);
  if (status) *status = st;
  if (st != LookupStatus::hit) return {};
  // The one-walk writer first, as the batched lookup does (cache_batch_read.cpp); the
  // general writer for what it gives up on. Both give byte-identical responses.
  ResponseResult direct;
  if (write_response_direct(copy.span(), key.blob().size(), query, now, options, out, capacity, &direct)) return direct;
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

}  // namespace dnsarena::cache

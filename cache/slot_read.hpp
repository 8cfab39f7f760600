// SPDX-License-Identifier: GPL-3.0-or-later
// A lookup's read of one index slot's entry under the seqlock, and the hit-or-expired
// verdict: Cache::read_slot_entry() and Cache::hit_or_expired() (cache.hpp), defined
// inline here so that both lookups (cache_read.cpp) and the batched one
// (cache_batch_read.cpp) compile them into their loops without a call's argument
// shuffling. Not installed; include it only from the cache's .cpp files.
// FORMAT-DEPENDENT: reads the entry header (entry_format.hpp) and the slot (index_slot.hpp).
#pragma once
#include <atomic>
#include <cstring>

#include "cache.hpp"
#include "relaxed_copy.hpp"
#include "response_in_arena.hpp"

namespace dnsarena::cache {

// a[0..n) == b[0..n), eight bytes at a time with an overlapping last word (n >= 8), no
// library call: key blobs are 6-260 bytes, most 20-40.
inline bool key_bytes_equal(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  if (n < 8) return std::memcmp(a, b, n) == 0;
  std::uint64_t diff = 0, x, y;
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    diff |= x ^ y;
  }
  std::memcpy(&x, a + n - 8, 8);
  std::memcpy(&y, b + n - 8, 8);
  return (diff | (x ^ y)) == 0;
}

inline Cache::SlotRead Cache::read_slot_entry(std::uint64_t s, std::span<const std::uint8_t> blob, EntryCopy& out,
                                              std::size_t copy_limit) const {
  const ArenaOffset off = slot_offset(s);
  const std::uint64_t byte_off = off.byte_offset();
  const std::uint32_t region = static_cast<std::uint32_t>(byte_off >> region_shift_);
  if (region >= region_count_) return SlotRead::other;  // never published by a correct writer
  const std::uint64_t g1 = regions_[region].generation.load(std::memory_order_acquire);
  if (generation_tag(g1) != slot_gen_tag(s)) return SlotRead::stale;  // recycled: the slot is about to change
  // Only bytes below the published fill are complete in this generation (the fill is
  // stored with release after the copy-in). A slot above it is stale: its region was
  // recycled under us and the tag matches again; reload the slot.
  const std::size_t in_region = byte_off & (region_bytes_ - 1);
  const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
  if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) return SlotRead::stale;
  const std::uint8_t* src = entry_address(off);
  std::size_t len = relaxed_load_u16(src);
  const bool sane = len >= kEntryHeaderBytes + kKeyFixedBytes && in_region + len <= fill;
  if (sane) relaxed_copy_out(out.bytes.data(), src, std::min(len, copy_limit));
  std::atomic_thread_fence(std::memory_order_acquire);
  if (regions_[region].generation.load(std::memory_order_relaxed) != g1) return SlotRead::stale;
  if (!sane) return SlotRead::other;
  // The copy is now a consistent snapshot of a published entry.
  const std::size_t klen = blob.size();
  if (len < kEntryKeyOffset + klen || !key_bytes_equal(out.bytes.data() + kEntryKeyOffset, blob.data(), klen))
    return SlotRead::other;  // same tag, other key
  out.length = len;
  return SlotRead::match;
}

inline LookupStatus Cache::hit_or_expired(std::atomic<std::uint64_t>& slot, std::uint64_t s, std::uint32_t now,
                                          const EntryCopy& copy) {
  std::uint32_t expire;
  std::memcpy(&expire, copy.bytes.data() + kEntryExpireOffset, 4);
  if (now >= expire) return LookupStatus::expired;
  if (!slot_hit(s)) {
    std::uint64_t expected = s;
    slot.compare_exchange_strong(expected, s | kSlotHitBit, std::memory_order_relaxed);
  }
  return LookupStatus::hit;
}

// Forced inline into both lookups: a call's argument shuffling and spills cost more than
// the code it would share.
[[gnu::always_inline]] inline Cache::FusedRead Cache::read_slot_response(
    std::atomic<std::uint64_t>& slot, std::uint64_t s, std::span<const std::uint8_t> blob, const QueryInfo& q,
    std::uint32_t now, const ResponseOptions& o, std::uint8_t* out, std::size_t capacity, ResponseResult* result) {
  const ArenaOffset off = slot_offset(s);
  const std::uint64_t byte_off = off.byte_offset();
  const std::uint32_t region = static_cast<std::uint32_t>(byte_off >> region_shift_);
  if (region >= region_count_) return FusedRead::fallback;
  const std::uint64_t g1 = regions_[region].generation.load(std::memory_order_acquire);
  if (generation_tag(g1) != slot_gen_tag(s)) return FusedRead::fallback;
  const std::size_t in_region = byte_off & (region_bytes_ - 1);
  const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
  if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) return FusedRead::fallback;
  // The header in two words, each loaded once: |len|info|reserved|expire| and |ttl|key...|.
  const auto* w = reinterpret_cast<const std::uint64_t*>(entry_address(off));
  const std::uint64_t h0 = __atomic_load_n(w, __ATOMIC_RELAXED);
  const std::uint64_t h1 = __atomic_load_n(w + 1, __ATOMIC_RELAXED);
  const std::size_t len = h0 & 0xFFFF;
  const std::size_t k = blob.size();
  // From here on every read is of bytes below len, and len keeps the entry below the
  // fill: a torn len cannot take the walk outside the region.
  if (k < 8 || len < kEntryKeyOffset + k + 3 || in_region + len > fill || ((h0 >> 24) & 0xFF) != 0)
    return FusedRead::fallback;
  const auto qtype = static_cast<std::uint16_t>(blob[0] | (blob[1] << 8));
  if (const std::size_t first = kEntryKeyOffset + k + 3; first < len && !in_arena_first_record_ok(w, first, qtype))
    return FusedRead::fallback;  // a form the walk gives up on: the copying path at once
  if (!key_equal_in_arena(w, blob.data(), k)) return FusedRead::fallback;  // another key: find_and_copy decides
  const auto expire = static_cast<std::uint32_t>(h0 >> 32);
  const bool expired = now >= expire;
  const bool written =
      expired || write_response_in_arena(w, len, k, static_cast<std::uint8_t>(h0 >> 16), expire,
                                         static_cast<std::uint32_t>(h1), qtype,
                                         q, now, o, out, capacity, result);
  if (after_arena_walk_ != nullptr) after_arena_walk_(after_arena_walk_arg_);
  // The seqlock: only if the generation is unchanged were the bytes read a published
  // entry's; otherwise the response (possibly torn) is thrown away by the caller's
  // fallback, which rewrites the whole buffer or answers a miss.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (regions_[region].generation.load(std::memory_order_relaxed) != g1 || !written) return FusedRead::fallback;
  if (expired) return FusedRead::expired;
  if (!slot_hit(s)) {
    std::uint64_t expected = s;
    slot.compare_exchange_strong(expected, s | kSlotHitBit, std::memory_order_relaxed);
  }
  return FusedRead::hit;
}

inline std::atomic<std::uint64_t>* Cache::first_tagged_slot(const IndexPosition& pos, std::uint64_t* value) const {
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
    std::atomic<std::uint64_t>* slots = buckets_[b].slots;
#pragma GCC unroll 8
    for (unsigned k = 0; k < kSlotsPerBucket; ++k) {
      const std::uint64_t s = slots[k].load(std::memory_order_relaxed);
      if (slot_hash_tag(s) != pos.hash_tag || s == 0) continue;
      *value = s;
      return &slots[k];
    }
  }
  return nullptr;
}

}  // namespace dnsarena::cache

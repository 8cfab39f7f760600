// SPDX-License-Identifier: GPL-3.0-or-later
// Every lock-free read of the index and the arena, built on two templates (cache.hpp):
//
//   read_seqlocked        the one seqlock read of a slot's entry: region, generation tag,
//                         fill, the entry's first word, the caller's body over the entry's
//                         words, acquire fence, generation re-check. Every reader's read of
//                         an entry is this one function with its own body.
//   for_each_tagged_slot  the one slot scan of a key's two buckets: bucket 1's eight
//                         slots in order, then bucket 2's, those with the key's hash tag.
//
// and what the readers make of them:
//
//   find_key_slot         a lookup's search: the scan, each tagged slot read under the
//                         seqlock, a stale one making it start again (at most 8 times)
//   copy_slot_entry       the entry copied out under the seqlock (for_each_entry)
//   read_slot_entry       the same and the key compared (find_and_copy, the batch's
//                         copying path, lookup_footprint)
//   read_slot_response    the fused read: the response written straight from the arena
//                         (both lookups' first try)
//   probe_at's body       the key compared in place (cache_trace_run.cpp)
//   first_tagged_slot     the batch's stage 2 and lookup_response: the first tagged slot
//
// All inline (forced where it was measured to matter), so that each lookup compiles its
// body into its own loop without a call's argument shuffling. The lambdas handed to the
// templates carry __attribute__((always_inline)) (GCC ignores [[gnu::always_inline]] on a
// lambda): their operator() is an inline function of the header, which GCC otherwise
// keeps out of line although it has one caller (the fused read's body was a call).
// Not installed; include it only from the cache's .cpp files.
// FORMAT-DEPENDENT: reads the entry header (entry_format.hpp) and the slot (index_slot.hpp).
#pragma once
#include <algorithm>
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

// The seqlock (region_table.hpp) in the order the writer's steps require: the generation
// (acquire) against the slot's tag, then the fill (acquire): only bytes below it are
// complete in this generation (the fill is stored with release after the copy-in), and a
// slot above it is stale (its region was recycled under us and the tag matches again).
// Then the entry's first word: its length, which must keep the entry below the fill, so
// that a torn length cannot take the body outside the region, and be at least min_len,
// what the body reads without checking. After the body, an acquire fence orders its
// relaxed loads before the generation's second load: only if that is unchanged were the
// bytes the body read a published entry's.
template <class Body>
[[gnu::always_inline]] inline Cache::SlotRead Cache::read_seqlocked(std::uint64_t s, std::size_t min_len,
                                                                    Body&& body) const {
  const std::uint64_t byte_off = slot_offset(s).byte_offset();
  const auto region = static_cast<std::uint32_t>(byte_off >> region_shift_);
  if (region >= region_count_) return SlotRead::other;  // never published by a correct writer
  const std::atomic<std::uint64_t>& generation = regions_[region].generation;
  const std::uint64_t g1 = generation.load(std::memory_order_acquire);
  if (generation_tag(g1) != slot_gen_tag(s)) return SlotRead::stale;  // recycled: the slot is about to change
  const std::size_t in_region = byte_off & (region_bytes_ - 1);
  const std::uint32_t fill = regions_[region].fill.load(std::memory_order_acquire);
  if (in_region + kEntryHeaderBytes + kKeyFixedBytes > fill) return SlotRead::stale;
  const auto* w = reinterpret_cast<const std::uint64_t*>(seg_.arena() + byte_off);
  const std::uint64_t h0 = __atomic_load_n(w, __ATOMIC_RELAXED);
  const std::size_t len = h0 & 0xFFFF;  // little-endian: entry_len is the low 16 bits
  const bool accepted = len >= min_len && in_region + len <= fill && body(w, h0, len);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (generation.load(std::memory_order_relaxed) != g1) return SlotRead::stale;
  return accepted ? SlotRead::match : SlotRead::other;
}

template <std::memory_order Order, class Visit>
[[gnu::always_inline]] inline bool Cache::for_each_tagged_slot(const IndexPosition& pos, Visit&& visit) const {
  for (const std::uint64_t b : {pos.bucket1, pos.bucket2}) {
    std::atomic<std::uint64_t>* slots = buckets_[b].slots;
    // Unrolled: the tag test of a slot is a load, a mask and a compare, cheaper than a
    // loop whose exit also tests what the visitor said.
#pragma GCC unroll 8
    for (unsigned k = 0; k < kSlotsPerBucket; ++k) {
      const std::uint64_t s = slots[k].load(Order);
      if (slot_hash_tag(s) != pos.hash_tag || s == 0) continue;
      if (visit(slots[k], s)) return true;
    }
  }
  return false;
}

template <class ReadSlot>
[[gnu::always_inline]] inline std::atomic<std::uint64_t>* Cache::find_key_slot(const IndexPosition& pos,
                                                                              ReadSlot&& read, std::uint64_t* value,
                                                                              unsigned* retries) const {
  for (int attempt = 0; attempt < 8; ++attempt) {
    SlotRead verdict = SlotRead::other;
    std::atomic<std::uint64_t>* found = nullptr;
    const auto visit = [&](std::atomic<std::uint64_t>& slot, std::uint64_t s) __attribute__((always_inline)) {
      verdict = read(s);
      if (verdict == SlotRead::match) {
        found = &slot;
        *value = s;
      }
      return verdict != SlotRead::other;  // match: found; stale: the slots are changing
    };
    for_each_tagged_slot<std::memory_order_acquire>(pos, visit);
    if (verdict != SlotRead::stale) return found;
    ++*retries;
  }
  return nullptr;
}

inline std::atomic<std::uint64_t>* Cache::first_tagged_slot(const IndexPosition& pos, std::uint64_t* value) const {
  std::atomic<std::uint64_t>* found = nullptr;
  const auto first = [&](std::atomic<std::uint64_t>& slot, std::uint64_t s) __attribute__((always_inline)) {
    found = &slot;
    *value = s;
    return true;
  };
  for_each_tagged_slot<std::memory_order_relaxed>(pos, first);
  return found;
}

inline Cache::SlotRead Cache::copy_slot_entry(std::uint64_t s, EntryCopy& out, std::size_t copy_limit) const {
  std::size_t len = 0;
  const auto copy = [&](const std::uint64_t* w, std::uint64_t, std::size_t n) __attribute__((always_inline)) {
    relaxed_copy_out(out.bytes.data(), reinterpret_cast<const std::uint8_t*>(w), std::min(n, copy_limit));
    len = n;
    return true;
  };
  const SlotRead read = read_seqlocked(s, kEntryHeaderBytes + kKeyFixedBytes, copy);
  if (read == SlotRead::match) out.length = len;
  return read;
}

inline Cache::SlotRead Cache::read_slot_entry(std::uint64_t s, std::span<const std::uint8_t> blob, EntryCopy& out,
                                              std::size_t copy_limit) const {
  const SlotRead read = copy_slot_entry(s, out, copy_limit);
  if (read != SlotRead::match) return read;
  // The copy is a consistent snapshot of a published entry: compare its key.
  const std::size_t klen = blob.size();
  if (out.length < kEntryKeyOffset + klen || !key_bytes_equal(out.bytes.data() + kEntryKeyOffset, blob.data(), klen))
    return SlotRead::other;  // same tag, other key
  return SlotRead::match;
}

// The hit bit set by CAS on the value read, s, so that it never alters another entry's
// slot (index_slot.hpp).
inline void set_hit_bit(std::atomic<std::uint64_t>& slot, std::uint64_t s) {
  if (slot_hit(s)) return;
  std::uint64_t expected = s;
  slot.compare_exchange_strong(expected, s | kSlotHitBit, std::memory_order_relaxed);
}

inline std::uint32_t copied_expire(const EntryCopy& copy) {
  std::uint32_t expire;
  std::memcpy(&expire, copy.bytes.data() + kEntryExpireOffset, 4);
  return expire;
}

inline LookupStatus Cache::hit_or_expired(std::atomic<std::uint64_t>& slot, std::uint64_t s, std::uint32_t now,
                                          std::uint32_t expire) {
  if (now >= expire) return LookupStatus::expired;
  set_hit_bit(slot, s);
  return LookupStatus::hit;
}

// Forced inline into both lookups: a call's argument shuffling and spills cost more than
// the code it would share.
[[gnu::always_inline]] inline Cache::FusedRead Cache::read_slot_response(
    std::atomic<std::uint64_t>& slot, std::uint64_t s, std::span<const std::uint8_t> blob, const QueryInfo& q,
    std::uint32_t now, const ResponseOptions& o, std::uint8_t* out, std::size_t capacity, ResponseResult* result) {
  const std::size_t k = blob.size();
  if (k < 8) return FusedRead::fallback;  // key_equal_in_arena compares whole words
  bool expired = false;
  // The body's reads are all of bytes below len (read_seqlocked keeps len below the fill).
  // A response written from a torn walk is thrown away by the caller's fallback, which
  // rewrites the whole buffer or answers a miss.
  const auto walk = [&](const std::uint64_t* w, std::uint64_t h0, std::size_t len) __attribute__((always_inline)) {
    // The header in two words, each loaded once: |len|info|reserved|expire| and |ttl|key...|.
    if (((h0 >> 24) & 0xFF) != 0) return false;
    const auto qtype = static_cast<std::uint16_t>(blob[0] | (blob[1] << 8));
    if (const std::size_t first = kEntryKeyOffset + k + 3; first < len && !in_arena_first_record_ok(w, first, qtype))
      return false;  // a form the walk gives up on: the copying path at once
    if (!key_equal_in_arena(w, blob.data(), k)) return false;  // another key: find_and_copy decides
    const std::uint64_t h1 = __atomic_load_n(w + 1, __ATOMIC_RELAXED);
    const auto expire = static_cast<std::uint32_t>(h0 >> 32);
    expired = now >= expire;
    const bool written =
        expired || write_response_in_arena(w, len, k, static_cast<std::uint8_t>(h0 >> 16), expire,
                                                 static_cast<std::uint32_t>(h1), qtype, q, now, o, out, capacity,
                                                 result);
    if (after_arena_walk_ != nullptr) after_arena_walk_(after_arena_walk_arg_);
    return written;
  };
  // At least the header, the key and the three section counts.
  if (read_seqlocked(s, kEntryKeyOffset + k + 3, walk) != SlotRead::match) return FusedRead::fallback;
  if (expired) return FusedRead::expired;
  set_hit_bit(slot, s);
  return FusedRead::hit;
}

}  // namespace dnsarena::cache

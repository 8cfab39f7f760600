// SPDX-License-Identifier: GPL-3.0-or-later
// The host's table of validated NSEC ranges (nsec_ranges.hpp).
#include "workers/nsec_ranges.hpp"

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dnsarena::workers {

namespace {

constexpr unsigned kStartShift = 32;
constexpr std::uint64_t kWriting = 1;

// The record's words: each one mixed in with its position, so that a word moved or lost
// changes the sum as surely as a word changed.
std::uint64_t word_sum(std::uint64_t sum, std::uint64_t word, std::size_t index) {
  return common::fmix64(sum ^ word ^ (std::uint64_t{index} << 48));
}

}  // namespace

NsecRanges::NsecRanges(std::uint32_t buckets, bool shared) {
  buckets = std::clamp<std::uint32_t>(buckets, 1, 1u << 16);
  if (buckets & (buckets - 1)) buckets = 1u << (32 - __builtin_clz(buckets));
  map_ = common::AnonymousMapping(sizeof(Header) + std::size_t{buckets} * kWays * kSlotBytes, shared,
                                  "NSEC range table");
  header_ = static_cast<Header*>(map_.data());  // zero-filled: every slot empty
  arc4random_buf(&header_->seed, sizeof header_->seed);
  header_->base_ms = common::monotonic_ms();
  header_->buckets = buckets;
  header_->capacity = static_cast<std::uint32_t>(kCapacity);
}

std::size_t NsecRanges::first_slot(std::uint64_t zone_hash) const {
  return (common::fmix64(zone_hash ^ header_->seed) & (header_->buckets - 1)) * kWays;
}

bool NsecRanges::put(std::uint64_t zone_hash, std::uint64_t owner_hash, std::uint32_t expires,
                     std::span<const std::uint8_t> record, std::uint64_t now_ms) {
  if (zone_hash == 0 || record.empty() || record.size() > kCapacity) return false;
  const std::size_t first = first_slot(zone_hash);
  // The range's own slot, else an empty one, else the one that expires first.
  std::size_t pick = first;
  std::uint32_t pick_expires = UINT32_MAX;
  for (std::size_t i = first; i < first + kWays; ++i) {
    Slot& s = slot(i);
    const std::uint64_t zone = s.zone.load(std::memory_order_relaxed);
    if (zone == zone_hash && s.owner.load(std::memory_order_relaxed) == owner_hash) {
      pick = i;
      break;
    }
    const std::uint32_t e = zone == 0 ? 0 : s.expires.load(std::memory_order_relaxed);
    if (e < pick_expires) {
      pick = i;
      pick_expires = e;
    }
  }
  Slot& s = slot(pick);
  const std::uint64_t now = relative(now_ms) & 0xFFFFFFFFull;
  std::uint64_t seen = s.seq.load(std::memory_order_relaxed);
  if (seen & kWriting) {
    // Another worker writes it, or one was killed mid-write: taken over once that is old.
    const std::uint64_t started = seen >> kStartShift;
    if (((now - started) & 0xFFFFFFFFull) < kStaleWriteMs) return false;
  }
  const std::uint64_t generation = seen & 0xFFFFFFFFull & ~kWriting;
  const std::uint64_t writing = now << kStartShift | generation | kWriting;
  if (!s.seq.compare_exchange_strong(seen, writing, std::memory_order_acquire, std::memory_order_relaxed))
    return false;
  s.zone.store(zone_hash, std::memory_order_relaxed);
  s.owner.store(owner_hash, std::memory_order_relaxed);
  s.expires.store(expires, std::memory_order_relaxed);
  s.length.store(static_cast<std::uint32_t>(record.size()), std::memory_order_relaxed);
  auto* words = reinterpret_cast<std::uint64_t*>(record_of(s));
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i * 8 < record.size(); ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, record.data() + i * 8, std::min<std::size_t>(8, record.size() - i * 8));
    __atomic_store_n(words + i, w, __ATOMIC_RELAXED);
    sum = word_sum(sum, w, i);
  }
  s.checksum.store(sum, std::memory_order_relaxed);
  // Even again, one generation on: a reader that copied across this write sees it moved.
  s.seq.store((generation + 2) & 0xFFFFFFFFull, std::memory_order_release);
  return true;
}

void NsecRanges::for_zone(std::uint64_t zone_hash, std::uint32_t now, std::span<std::uint8_t> scratch,
                          const std::function<bool(std::span<const std::uint8_t>, std::uint32_t)>& fn) const {
  if (zone_hash == 0 || scratch.size() < kCapacity) return;
  const std::size_t first = first_slot(zone_hash);
  for (std::size_t i = first; i < first + kWays; ++i) {
    Slot& s = slot(i);
    if (s.zone.load(std::memory_order_relaxed) != zone_hash) continue;
    const std::uint64_t before = s.seq.load(std::memory_order_acquire);
    if (before & kWriting) continue;
    if (s.zone.load(std::memory_order_relaxed) != zone_hash) continue;
    const std::uint32_t expires = s.expires.load(std::memory_order_relaxed);
    if (expires <= now) continue;
    const std::size_t length = s.length.load(std::memory_order_relaxed);
    if (length == 0 || length > kCapacity) continue;
    const std::uint64_t expected = s.checksum.load(std::memory_order_relaxed);
    const auto* words = reinterpret_cast<const std::uint64_t*>(record_of(s));
    std::uint64_t sum = 0;
    for (std::size_t w = 0; w * 8 < length; ++w) {
      const std::uint64_t word = __atomic_load_n(words + w, __ATOMIC_RELAXED);
      std::memcpy(scratch.data() + w * 8, &word, std::min<std::size_t>(8, length - w * 8));
      sum = word_sum(sum, word, w);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) != before || sum != expected) continue;
    if (!fn(scratch.first(length), expires)) return;
  }
}

}  // namespace dnsarena::workers

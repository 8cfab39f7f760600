// SPDX-License-Identifier: GPL-3.0-or-later
// The host's table of validated NSEC ranges (nsec_ranges.hpp).
#include "workers/nsec_ranges.hpp"

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"
#include "workers/seqlock_words.hpp"

#include <algorithm>
#include <cstdlib>

namespace dnsarena::workers {

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
  const auto generation = seqlock::begin_write(s.seq, relative(now_ms), kStaleWriteMs);
  if (!generation) return false;  // another worker writes it (or one killed mid-write, lately)
  s.zone.store(zone_hash, std::memory_order_relaxed);
  s.owner.store(owner_hash, std::memory_order_relaxed);
  s.expires.store(expires, std::memory_order_relaxed);
  s.length.store(static_cast<std::uint32_t>(record.size()), std::memory_order_relaxed);
  s.checksum.store(seqlock::store_words(record_of(s), record), std::memory_order_relaxed);
  seqlock::end_write(s.seq, *generation);
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
    if (before & seqlock::kWriting) continue;
    if (s.zone.load(std::memory_order_relaxed) != zone_hash) continue;
    const std::uint32_t expires = s.expires.load(std::memory_order_relaxed);
    if (expires <= now) continue;
    const std::size_t length = s.length.load(std::memory_order_relaxed);
    if (length == 0 || length > kCapacity) continue;
    const std::uint64_t expected = s.checksum.load(std::memory_order_relaxed);
    const std::uint64_t sum = seqlock::load_words(record_of(s), length, scratch.data());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) != before || sum != expected) continue;
    if (!fn(scratch.first(length), expires)) return;
  }
}

}  // namespace dnsarena::workers

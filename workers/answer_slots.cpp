// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/answer_slots.hpp"

#include "common/monotonic_clock.hpp"
#include "workers/seqlock_words.hpp"

#include <algorithm>

namespace dnsarena::workers {

AnswerSlots::AnswerSlots(std::uint32_t slots, bool shared) {
  slots = std::clamp<std::uint32_t>(slots, 1, 1u << 16);
  if (slots & (slots - 1)) slots = 1u << (32 - __builtin_clz(slots));
  map_ = common::AnonymousMapping(sizeof(Header) + std::size_t{slots} * kSlotBytes, shared, "upstream answer slots");
  header_ = static_cast<Header*>(map_.data());
  header_->base_ms = common::monotonic_ms();
  header_->slots = slots;
  header_->capacity = static_cast<std::uint32_t>(kCapacity);
}

bool AnswerSlots::publish(const UpstreamClaims::Claim& claim, std::uint8_t scope, std::span<const std::uint8_t> entry,
                          std::uint64_t now_ms) {
  if (claim.value == 0 || entry.empty() || entry.size() > kCapacity) return false;
  Slot& s = slot(claim.slot & (header_->slots - 1));
  // Another owner writes it, or one was killed mid-write: taken over once that is old.
  const auto generation = seqlock::begin_write(s.seq, relative(now_ms), kStaleWriteMs);
  if (!generation) return false;
  s.claim.store(claim.value, std::memory_order_relaxed);
  s.claim_slot.store(claim.slot, std::memory_order_relaxed);
  s.length.store(static_cast<std::uint32_t>(entry.size()), std::memory_order_relaxed);
  s.scope.store(scope, std::memory_order_relaxed);
  s.checksum.store(seqlock::store_words(entry_of(s), entry), std::memory_order_relaxed);
  seqlock::end_write(s.seq, *generation);
  return true;
}

std::size_t AnswerSlots::read(const UpstreamClaims::Claim& claim, std::span<std::uint8_t> out,
                              std::uint8_t* scope) const {
  if (claim.value == 0) return 0;
  Slot& s = slot(claim.slot & (header_->slots - 1));
  const std::uint64_t before = s.seq.load(std::memory_order_acquire);
  if (before & seqlock::kWriting) return 0;
  if (s.claim.load(std::memory_order_relaxed) != claim.value ||
      s.claim_slot.load(std::memory_order_relaxed) != claim.slot)
    return 0;
  const std::size_t length = s.length.load(std::memory_order_relaxed);
  if (length == 0 || length > kCapacity || length > out.size()) return 0;
  const std::uint8_t sc = s.scope.load(std::memory_order_relaxed);
  const std::uint64_t expected = s.checksum.load(std::memory_order_relaxed);
  const std::uint64_t sum = seqlock::load_words(entry_of(s), length, out.data());
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.seq.load(std::memory_order_relaxed) != before || sum != expected) return 0;
  *scope = sc;
  return length;
}

}  // namespace dnsarena::workers

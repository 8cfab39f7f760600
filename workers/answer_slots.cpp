// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/answer_slots.hpp"

#include "common/mix_hash.hpp"
#include "common/monotonic_clock.hpp"

#include <algorithm>
#include <cstring>

namespace dnsarena::workers {

namespace {

constexpr unsigned kStartShift = 32;
constexpr std::uint64_t kWriting = 1;

// The entry's words: each one mixed in with its position, so that a word moved or lost
// changes the sum as surely as a word changed.
std::uint64_t word_sum(std::uint64_t sum, std::uint64_t word, std::size_t index) {
  return common::fmix64(sum ^ word ^ (std::uint64_t{index} << 48));
}

}  // namespace

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
  const std::uint64_t now = relative(now_ms) & 0xFFFFFFFFull;
  std::uint64_t seen = s.seq.load(std::memory_order_relaxed);
  if (seen & kWriting) {
    // Another owner writes it, or one was killed mid-write: taken over once that is old.
    const std::uint64_t started = seen >> kStartShift;
    if (((now - started) & 0xFFFFFFFFull) < kStaleWriteMs) return false;
  }
  const std::uint64_t generation = seen & 0xFFFFFFFFull & ~kWriting;
  const std::uint64_t writing = now << kStartShift | generation | kWriting;
  if (!s.seq.compare_exchange_strong(seen, writing, std::memory_order_acquire, std::memory_order_relaxed))
    return false;
  s.claim.store(claim.value, std::memory_order_relaxed);
  s.claim_slot.store(claim.slot, std::memory_order_relaxed);
  s.length.store(static_cast<std::uint32_t>(entry.size()), std::memory_order_relaxed);
  s.scope.store(scope, std::memory_order_relaxed);
  auto* words = reinterpret_cast<std::uint64_t*>(entry_of(s));
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i * 8 < entry.size(); ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, entry.data() + i * 8, std::min<std::size_t>(8, entry.size() - i * 8));
    __atomic_store_n(words + i, w, __ATOMIC_RELAXED);
    sum = word_sum(sum, w, i);
  }
  s.checksum.store(sum, std::memory_order_relaxed);
  // Even again, one generation on: a reader that copied across this write sees it moved.
  s.seq.store(((generation + 2) & 0xFFFFFFFFull), std::memory_order_release);
  return true;
}

std::size_t AnswerSlots::read(const UpstreamClaims::Claim& claim, std::span<std::uint8_t> out,
                              std::uint8_t* scope) const {
  if (claim.value == 0) return 0;
  Slot& s = slot(claim.slot & (header_->slots - 1));
  const std::uint64_t before = s.seq.load(std::memory_order_acquire);
  if (before & kWriting) return 0;
  if (s.claim.load(std::memory_order_relaxed) != claim.value ||
      s.claim_slot.load(std::memory_order_relaxed) != claim.slot)
    return 0;
  const std::size_t length = s.length.load(std::memory_order_relaxed);
  if (length == 0 || length > kCapacity || length > out.size()) return 0;
  const std::uint8_t sc = s.scope.load(std::memory_order_relaxed);
  const std::uint64_t expected = s.checksum.load(std::memory_order_relaxed);
  const auto* words = reinterpret_cast<const std::uint64_t*>(entry_of(s));
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i * 8 < length; ++i) {
    const std::uint64_t w = __atomic_load_n(words + i, __ATOMIC_RELAXED);
    std::memcpy(out.data() + i * 8, &w, std::min<std::size_t>(8, length - i * 8));
    sum = word_sum(sum, w, i);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.seq.load(std::memory_order_relaxed) != before || sum != expected) return 0;
  *scope = sc;
  return length;
}

}  // namespace dnsarena::workers

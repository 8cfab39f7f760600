// SPDX-License-Identifier: GPL-3.0-or-later
// The seqlock of a slot in a host-wide table whose record is copied in whole words
// (answer_slots.hpp, nsec_ranges.hpp): the slot's sequence word, and the copy of its
// record with a checksum, so that a reader never takes a torn record.
//
// The sequence word: |63 -- 32: write start ms|31 -- 1: generation|0: writing|
//   begin_write  CAS from even to odd (writing, with its start time); a slot left odd
//                (its writer was killed mid-write) is taken over once the write is older
//                than `stale_ms`;
//   end_write    even again, one generation on (release): a reader that copied across
//                the write sees the word moved.
// A reader loads the word (acquire; odd: nothing to read), copies the record with
// load_words, fences (acquire), and takes the copy only when the word is unchanged and the
// checksum matches the one the writer stored. A writer stopped longer than stale_ms and
// then resumed may scribble over a newer record without touching the word: the checksum
// makes a reader refuse that copy.
// Each word is mixed into the checksum with its position, so that a word moved or lost
// changes it as surely as a word changed. Records are relaxed atomics word by word (no
// data race on shared memory), zero-padded to 8 bytes.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "common/mix_hash.hpp"

namespace dnsarena::workers::seqlock {

inline constexpr unsigned kStartShift = 32;
inline constexpr std::uint64_t kWriting = 1;

// The slot for writing at `now_ms` (relative to the table's base, any 32 bits): the
// generation to hand to end_write, or none (another writer holds it, or it moved).
inline std::optional<std::uint64_t> begin_write(std::atomic<std::uint64_t>& seq, std::uint64_t now_ms,
                                                std::uint64_t stale_ms) {
  const std::uint64_t now = now_ms & 0xFFFFFFFFull;
  std::uint64_t seen = seq.load(std::memory_order_relaxed);
  if (seen & kWriting) {
    const std::uint64_t started = seen >> kStartShift;
    if (((now - started) & 0xFFFFFFFFull) < stale_ms) return std::nullopt;
  }
  const std::uint64_t generation = seen & 0xFFFFFFFFull & ~kWriting;
  if (!seq.compare_exchange_strong(seen, now << kStartShift | generation | kWriting, std::memory_order_acquire,
                                   std::memory_order_relaxed))
    return std::nullopt;
  return generation;
}

inline void end_write(std::atomic<std::uint64_t>& seq, std::uint64_t generation) {
  seq.store((generation + 2) & 0xFFFFFFFFull, std::memory_order_release);
}

inline std::uint64_t word_sum(std::uint64_t sum, std::uint64_t word, std::size_t index) {
  return common::fmix64(sum ^ word ^ (std::uint64_t{index} << 48));
}

// Stores `record` into the words at `dst` (REQUIRES: room for its size rounded up to 8);
// returns its checksum.
inline std::uint64_t store_words(std::uint8_t* dst, std::span<const std::uint8_t> record) {
  auto* words = reinterpret_cast<std::uint64_t*>(dst);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i * 8 < record.size(); ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, record.data() + i * 8, std::min<std::size_t>(8, record.size() - i * 8));
    __atomic_store_n(words + i, w, __ATOMIC_RELAXED);
    sum = word_sum(sum, w, i);
  }
  return sum;
}

// Copies `length` bytes of the words at `src` into `out`; returns their checksum.
inline std::uint64_t load_words(const std::uint8_t* src, std::size_t length, std::uint8_t* out) {
  const auto* words = reinterpret_cast<const std::uint64_t*>(src);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i * 8 < length; ++i) {
    const std::uint64_t w = __atomic_load_n(words + i, __ATOMIC_RELAXED);
    std::memcpy(out + i * 8, &w, std::min<std::size_t>(8, length - i * 8));
    sum = word_sum(sum, w, i);
  }
  return sum;
}

}  // namespace dnsarena::workers::seqlock

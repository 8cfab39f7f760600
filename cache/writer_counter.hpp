// SPDX-License-Identifier: GPL-3.0-or-later
// Adding to a segment header counter that only the writer-lock holder changes
// (live_entries, bytes_in_use: segment_header.hpp, "writer_lock covers every field from
// 192 on").
//
// A relaxed load and store, not a locked read-modify-write: the lock already orders the
// writers, and readers (stats) only load. Relaxed atomics keep those loads race-free.
// A locked add (~20 cycles) per entry and counter would buy no ordering anyone relies on.
#pragma once
#include <atomic>
#include <cstdint>

namespace dnsarena::cache {

// REQUIRES: writer lock held.
inline void writer_add(std::atomic<std::uint64_t>& counter, std::uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}
// REQUIRES: writer lock held.
inline void writer_sub(std::atomic<std::uint64_t>& counter, std::uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) - delta, std::memory_order_relaxed);
}

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// Test hooks of Cache: a replacement key hash, a call inside the fused read, the writer
// lock and the dead-owner repair on demand. (Crash points inside writes are failpoint.hpp's,
// for the whole process.) For the in-tree tests only: this header is not installed with
// the library (cache/CMakeLists.txt).
#pragma once
#include <cstdint>
#include <functional>
#include <utility>

#include "cache.hpp"

namespace dnsarena::cache {

// A replacement of the key hash (a deliberately bad hash makes every key collide).
using HashOverride = std::function<std::uint64_t(const CacheKey&)>;

struct CacheTestHooks {
  // Every key hashes to h(key) instead of key.hash() (a deliberately bad hash makes
  // every key collide, so the cuckoo step and conflict evictions run constantly).
  static void set_hash_override(Cache& c, HashOverride h) { c.hash_override_ = std::move(h); }
  // fn(arg) runs inside every fused read (slot_read.hpp) after the entry was walked and
  // its response written, before the seqlock re-check; nullptr removes it.
  static void set_after_arena_walk(Cache& c, void (*fn)(void*), void* arg) {
    c.after_arena_walk_ = fn;
    c.after_arena_walk_arg_ = arg;
  }
  // Runs the dead-owner repair unconditionally, under the writer lock.
  static void repair_now(Cache& c) { c.repair_now(); }
  // Takes the writer lock (repairing if needed) and calls fn while holding it.
  static void with_writer_lock(Cache& c, const std::function<void()>& fn) { c.with_writer_lock(fn); }
};

}  // namespace dnsarena::cache

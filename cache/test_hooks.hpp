// SPDX-License-Identifier: GPL-3.0-or-later
// Test hooks of Cache: a replacement key hash, and a call inside the fused read. (Crash points inside writes are
// failpoint.hpp's, for the whole process.) For the in-tree tests only: this header is not installed with the library (cache/CMakeLists.txt).
#pragma once
#include <utility>

#include "cache.hpp"

namespace dnsarena::cache {

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
};

}  // namespace dnsarena::cache

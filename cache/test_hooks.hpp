// Test hooks of Cache: a replacement key hash and a failpoint inside reclaim. For the
// in-tree tests only: this header is not installed with the library (cache/CMakeLists.txt).
#pragma once
#include <utility>

#include "cache.hpp"

namespace dnsarena::cache {

struct CacheTestHooks {
  // Every key hashes to h(key) instead of key.hash() (a deliberately bad hash makes
  // every key collide, so the cuckoo step and conflict evictions run constantly).
  static void set_hash_override(Cache& c, HashOverride h) { c.hash_override_ = std::move(h); }
  // fn runs inside reclaim, writer lock held, after each entry of the region is dealt with.
  static void set_reclaim_hook(Cache& c, Cache::ReclaimHook fn) { c.reclaim_hook_ = std::move(fn); }
};

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/test_hooks.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Test hooks of Cache: a replacement key hash. (Crash points inside writes are
// failpoint.hpp's, for the whole process.) For the in-tree tests only: this header is not installed with the library (cache/CMakeLists.txt).
#pragma once
#include <utility>

#include "cache.hpp"

namespace dnsarena::frozen3 {

struct CacheTestHooks {
  // Every key hashes to h(key) instead of key.hash() (a deliberately bad hash makes
  // every key collide, so the cuckoo step and conflict evictions run constantly).
  static void set_hash_override(Cache& c, HashOverride h) { c.hash_override_ = std::move(h); }
};

}  // namespace dnsarena::frozen3

// SPDX-License-Identifier: GPL-3.0-or-later
// Each entry of a live cache once: Cache::for_each_entry (cache/cache_walk.cpp) with
// the duplicates an entry moved during the walk can cause removed, parsed for the tools.
//
// Cost: Cache::for_each_entry's (one pass over the index, one copy per live entry, no
// lock) plus a set of the keys' 64-bit hashes seen (about 16 bytes per entry).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "cache/cache.hpp"

namespace dnsarena::admin {

struct WalkOptions {
  bool include_expired = false;  // false: entries expired at `now` are not visited
  bool clear_hit_bits = false;   // see Cache::for_each_entry
};

// Calls visit(reader, hit) for each key once (the first copy seen). Malformed copies
// (never written by a correct writer) are skipped and counted in the return value.
std::uint64_t for_each_entry_once(cache::Cache& cache, std::uint32_t now, const WalkOptions& options,
                                  const std::function<void(cache::EntryReader&, bool hit)>& visit);

}  // namespace dnsarena::admin

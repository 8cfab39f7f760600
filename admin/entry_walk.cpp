// SPDX-License-Identifier: GPL-3.0-or-later
#include "admin/entry_walk.hpp"

#include <unordered_set>

namespace dnsarena::admin {

std::uint64_t for_each_entry_once(cache::Cache& cache, std::uint32_t now, const WalkOptions& options,
                                  const std::function<void(cache::EntryReader&, bool hit)>& visit) {
  // Keys seen, by their 64-bit hash: two distinct keys share one with probability about
  // n^2 / 2^65 (10^-8 for 10^6 entries; the second would be left out). Hashes, not the
  // blobs themselves: a set of blobs spends half the walk allocating and rehashing.
  std::unordered_set<std::uint64_t> seen;
  seen.reserve(cache.stats().live_entries + cache.stats().live_entries / 4);
  std::uint64_t malformed = 0;
  cache.for_each_entry(
      [&](const cache::EntryCopy& copy, bool hit) {
        cache::EntryReader reader(copy.span());
        if (!reader.valid()) {
          ++malformed;
          return;
        }
        if (!options.include_expired && reader.expire() <= now) return;
        const auto blob = reader.key_blob();
        if (!seen.insert(cache::CacheKey::hash_blob(blob)).second) return;
        visit(reader, hit);
      },
      options.clear_hit_bits);
  return malformed;
}

}  // namespace dnsarena::admin

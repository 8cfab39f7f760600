// SPDX-License-Identifier: GPL-3.0-or-later
// Removing a name's entries from a live cache (name_flush.hpp).
#include "admin/name_flush.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "admin/entry_walk.hpp"

namespace dnsarena::admin {

namespace {

// Whether wire name `q` is `name` or below it. Both lowercase.
bool at_or_below(std::span<const std::uint8_t> q, std::span<const std::uint8_t> name) {
  for (std::size_t pos = 0; pos < q.size(); pos += std::size_t{q[pos]} + 1) {
    if (q.size() - pos == name.size() && std::equal(name.begin(), name.end(), q.begin() + static_cast<long>(pos)))
      return true;
    if (q[pos] == 0) break;
  }
  return false;
}

}  // namespace

NameFlush flush_name(cache::Cache& cache, std::span<const std::uint8_t> name, int type, bool subtree) {
  cache.set_writer_lock_timeout(std::chrono::seconds(10));
  std::vector<cache::CacheKey> doomed;
  for_each_entry_once(cache, cache::wall_clock_now(), WalkOptions{.include_expired = true},
                      [&](cache::EntryReader& entry, bool) {
                        if (type >= 0 && entry.qtype() != type) return;
                        const auto q = entry.qname();
                        const bool match = subtree ? at_or_below(q, name)
                                                   : std::equal(q.begin(), q.end(), name.begin(), name.end());
                        if (!match) return;
                        cache::CacheKey key;
                        if (cache::CacheKey::from_blob(entry.key_blob(), key)) doomed.push_back(key);
                      });
  const auto unavailable = [&] {
    return cache.my_stats().counters[static_cast<std::size_t>(cache::Counter::writer_lock_unavailable)].load();
  };
  const std::uint64_t unavailable_before = unavailable();
  NameFlush r;
  for (const cache::CacheKey& key : doomed) r.removed += cache.erase(key);
  r.skipped = unavailable() - unavailable_before;
  return r;
}

}  // namespace dnsarena::admin

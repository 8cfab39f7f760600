// SPDX-License-Identifier: GPL-3.0-or-later
// Removing a name's entries from a live cache: the walk behind `dnsarena flush`
// (flush_command.cpp) and `dnsarena dnssec nta add|remove` (nta_command.cpp).
//
// Which entries: those whose qname is NAME (subtree: NAME or any name below it), of every
// qtype or only one, with every key variant: ECS scopes, DO, CD, authenticated. The key
// hash covers the whole key (ECS scope included), so those variants cannot be found by
// hashing NAME: both forms walk the index.
// Cost: one lock-free pass over the index plus one copy per live entry (about as long
// as `dnsarena check`), then, per entry removed, one erase under the writer lock (one
// atomic store): workers never wait on the walk, and at most one erase at a time. An
// entry written while the walk runs may survive it (it was fetched after the flush
// began, as in Unbound).
#pragma once
#include <cstdint>
#include <span>

#include "cache/cache.hpp"

namespace dnsarena::admin {

struct NameFlush {
  std::uint64_t removed = 0;
  std::uint64_t skipped = 0;  // not removed: the writer lock was unavailable
};

// REQUIRES: `name` a lowercase wire name. `type` < 0: every type.
NameFlush flush_name(cache::Cache& cache, std::span<const std::uint8_t> name, int type, bool subtree);

}  // namespace dnsarena::admin

// SPDX-License-Identifier: GPL-3.0-or-later
// The timers of a worker's outstanding queries (forwarded or resolved): a min-heap of
// (time, query token, generation). Entries are never removed from the middle: an entry
// whose token has ended, or whose generation is no longer its query's (the query was
// retried and armed a new timer), is stale and dropped when it reaches the top.
#pragma once
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace dnsarena::workers {

struct TokenDeadline {
  std::uint64_t at_us;
  std::uint64_t token;
  unsigned generation;
  bool operator>(const TokenDeadline& o) const { return at_us > o.at_us; }
};

using TokenDeadlines = std::priority_queue<TokenDeadline, std::vector<TokenDeadline>, std::greater<TokenDeadline>>;

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's route for a validation's DS and DNSKEY fetches (set_fetcher.hpp).
#include "workers/set_fetcher.hpp"

#include "workers/recursive_client.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

bool ForwardOrResolve::refresh(const cache::CacheKey& key, const dns::EcsOption& ecs, std::uint32_t seen_inserted) {
  if (recursive_.enabled() && !upstream_.forwards(key.qname())) return recursive_.refresh(key);
  return upstream_.refresh(key, ecs, seen_inserted);
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's route for a validation's DS and DNSKEY fetches (set_fetcher.hpp).
#include "workers/set_fetcher.hpp"

#include "workers/recursive_client.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

bool ForwardOrResolve::fetch(const cache::CacheKey& key) {
  if (recursive_.enabled() && !upstream_.forwards(key.qname())) return recursive_.refresh(key);
  return upstream_.refresh(key, {}, 0);
}

}  // namespace dnsarena::workers

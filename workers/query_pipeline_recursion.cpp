// SPDX-License-Identifier: GPL-3.0-or-later
// Stage 4 for a miss that no forward zone holds when the worker resolves by itself
// (query_pipeline.hpp, recursive_client.hpp): the client waits on the resolution, whose
// end reaches on_upstream_done as a forwarded answer does, or is parked on another
// worker's resolution of the question; or the name is in the failure cache, or a bound
// refused it: stale if held, else SERVFAIL.
#include "workers/query_pipeline.hpp"

#include <optional>

namespace dnsarena::workers {

std::size_t QueryPipeline::recurse(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                   const cache::CacheKey& plain, Waiter& w, std::uint8_t* out, std::size_t cap) {
  UpstreamClient::ForwardDetail detail;
  switch (recursive_.resolve(plain, w, &detail)) {
    case RecursiveClient::Started::yes: answered_later_ = true; return 0;
    case RecursiveClient::Started::failed:
      cache_.count(cache::Counter::failure_cached);
      return stale_.failed(q, c, !src.tcp, now_, failure_ede(detail.failure), out, cap);
    case RecursiveClient::Started::joined:  // another worker resolves it: wait for its answer
      if (const std::optional<std::size_t> n = join(q, c, src, w, detail.claim, out, cap)) return *n;
      break;
    case RecursiveClient::Started::overloaded: break;
  }
  return stale_.failed(q, c, !src.tcp, now_, std::nullopt, out, cap);
}

}  // namespace dnsarena::workers

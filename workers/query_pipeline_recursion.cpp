// SPDX-License-Identifier: GPL-3.0-or-later
// Stage 4 for a miss that no forward zone holds when the worker resolves by itself
// (query_pipeline.hpp, recursive_client.hpp): the client waits on the resolution, whose
// end reaches on_upstream_done as a forwarded answer does; or the name is in the failure
// cache, or a bound refused it: stale if held, else SERVFAIL.
#include "workers/query_pipeline.hpp"

namespace dnsarena::workers {

std::size_t QueryPipeline::recurse(const dns::ClientQuery& q, const CheckedQuery& c, const QuerySource& src,
                                   const cache::CacheKey& plain, Waiter& w, std::uint8_t* out, std::size_t cap) {
  FailureKind failure = FailureKind::timeout;
  switch (recursive_.resolve(plain, w, &failure)) {
    case RecursiveClient::Started::yes: answered_later_ = true; return 0;
    case RecursiveClient::Started::failed:
      cache_.count(cache::Counter::failure_cached);
      return stale_.failed(q, c, !src.tcp, now_, failure_ede(failure), out, cap);
    case RecursiveClient::Started::overloaded: break;
  }
  return stale_.failed(q, c, !src.tcp, now_, std::nullopt, out, cap);
}

}  // namespace dnsarena::workers

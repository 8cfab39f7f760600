// SPDX-License-Identifier: GPL-3.0-or-later
// Where a validation job (validation_jobs.hpp) gets a DS or DNSKEY set it needs and no
// cache holds: a query nobody waits for, under the set's (name, type, DO|CD) key, whose
// completion reaches ValidationJobs::on_fetched through the pipeline's upstream completion
// (QueryPipeline::on_upstream_done), whoever answered it.
//
// SetFetcher is what the jobs call; ForwardOrResolve is the worker's (and the route of
// its prefetches and stale answers' refreshes too): a name that a
// forward zone holds is asked of that zone's upstreams (UpstreamClient::refresh), any
// other name is resolved from the root by the worker's recursive resolver when recursion
// is on (RecursiveClient::refresh: the DS of a zone from its parent's servers, its DNSKEY
// from its own), exactly as a client's question for that name would travel.
#pragma once
#include <cstdint>

#include "cache/cache.hpp"
#include "dns/ecs_option.hpp"

namespace dnsarena::workers {

class UpstreamClient;
class RecursiveClient;

class SetFetcher {
public:
  virtual ~SetFetcher() = default;
  // Starts the query for `key` (flags DO|CD). False: none started (one for the key is in
  // flight already, a bound refused it, the name is in the failure cache, another worker
  // asks): the job looks in the cache again later. Throws std::invalid_argument for a
  // question the client refuses.
  virtual bool fetch(const cache::CacheKey& key) = 0;
};

class ForwardOrResolve final : public SetFetcher {
public:
  ForwardOrResolve(UpstreamClient& upstream, RecursiveClient& recursive) : upstream_(upstream), recursive_(recursive) {}
  bool fetch(const cache::CacheKey& key) override { return refresh(key, {}, 0); }
  // The same route for any background query of the pipeline (prefetch, a stale answer's
  // refresh): UpstreamClient::refresh with `ecs` and `seen_inserted` for a forwarded name,
  // else RecursiveClient::refresh (no ECS on the recursive path; a refresh another worker
  // finished since the caller's lookup is not looked for there, so at worst the name is
  // resolved once more). True when a query was started.
  bool refresh(const cache::CacheKey& key, const dns::EcsOption& ecs, std::uint32_t seen_inserted);

private:
  UpstreamClient& upstream_;
  RecursiveClient& recursive_;
};

}  // namespace dnsarena::workers

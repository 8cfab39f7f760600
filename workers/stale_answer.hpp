// SPDX-License-Identifier: GPL-3.0-or-later
// The stage of the worker's query path (query_pipeline.hpp) that answers when no fresh
// answer can be had: serve-stale (RFC 8767) and SERVFAIL with Extended DNS Errors
// (RFC 8914).
//
//   stale     an expired entry still held, expired for at most stale.max_age_s, under
//             the keys of ecs.hpp's lookup order: every TTL written as stale.ttl_s, EDE 3
//             (19 for NXDOMAIN) for EDNS clients. A fresh entry found meanwhile (a refresh
//             landed) is answered as a hit.
//   failed    stale if held, else SERVFAIL with the EDE that says why (22 no reachable
//             authority, 23 network error), or none when a bound refused the query.
//
// Cost: one peek per key tried, and a copy of the entry it finds (it may be reclaimed
// while it is written).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "cache/cache.hpp"
#include "dns/client_query.hpp"
#include "dns/extended_error.hpp"
#include "workers/ad_trust.hpp"
#include "workers/dnstap_writer.hpp"
#include "workers/failure_cache.hpp"
#include "workers/query_check.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

// The EDE of a name the failure cache holds: 22 when it timed out, else 23.
dns::ExtendedError failure_ede(FailureKind k);

class StaleAnswers {
public:
  // `ad_trust`: the host's AD cut (nullptr: none).
  StaleAnswers(const ServeConfig& cfg, cache::Cache& cache, const AdTrustCut* ad_trust)
      : cfg_(cfg), cache_(cache), ad_trust_(ad_trust) {}

  // The stale (or meanwhile fresh) answer to `q`, asked with `c`. Returns its size, 0
  // when nothing usable is held (or stale.max_age_s is 0).
  std::size_t stale(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now, std::uint8_t* out,
                    std::size_t cap);
  // No upstream answer for `q`: stale if held, else SERVFAIL (with `ede` when set).
  std::size_t failed(const dns::ClientQuery& q, const CheckedQuery& c, bool udp, std::uint32_t now,
                     std::optional<dns::ExtendedError> ede, std::uint8_t* out, std::size_t cap);
  // dnstap: stale answers are marked (dnstap_writer.hpp; nullptr: none).
  void set_dnstap(DnstapWriter* tap) { tap_ = tap; }

private:
  const ServeConfig& cfg_;
  cache::Cache& cache_;
  const AdTrustCut* ad_trust_;
  cache::EntryCopy copy_;
  DnstapWriter* tap_ = nullptr;
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The failure cache's entry for a name as a miss sees it, forwarded (upstream_client.cpp)
// or resolved (recursive_client.cpp): a bogus verdict recorded before a negative trust
// anchor came to cover the name (`dnsarena dnssec nta add`, runtime_ntas.hpp) is void:
// it is cleared and the name is asked and validated again, so an NTA takes effect at the
// next query rather than when the name's failure window ends (up to failure_cache.max_s).
//
// Cost: one failure-cache probe; on a bogus entry only, one look at the NTAs in force.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "workers/failure_cache.hpp"
#include "workers/runtime_ntas.hpp"

namespace dnsarena::workers {

// `name_hash`: the plain key's hash (the failure cache's key); `qname`: lowercase wire.
std::optional<FailureCache::Failure> live_failure(FailureCache& failures, RuntimeNtas& ntas, std::uint64_t name_hash,
                                                  std::span<const std::uint8_t> qname, std::uint64_t now_ms);

}  // namespace dnsarena::workers

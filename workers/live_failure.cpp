// SPDX-License-Identifier: GPL-3.0-or-later
// A failure-cache entry that still applies (live_failure.hpp).
#include "workers/live_failure.hpp"

#include "cache/cache.hpp"

namespace dnsarena::workers {

std::optional<FailureCache::Failure> live_failure(FailureCache& failures, RuntimeNtas& ntas, std::uint64_t name_hash,
                                                  std::span<const std::uint8_t> qname, std::uint64_t now_ms) {
  std::optional<FailureCache::Failure> failure = failures.find(name_hash, now_ms);
  if (failure && failure->kind == FailureKind::bogus && ntas.negative(qname, cache::wall_clock_now())) {
    failures.clear(name_hash);
    failure.reset();
  }
  return failure;
}

}  // namespace dnsarena::workers

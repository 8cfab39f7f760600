// SPDX-License-Identifier: GPL-3.0-or-later
// Which AD bits in the cache the config in force still vouches for.
//
// An upstream's AD bit is cached only when its zone has trust_ad (upstream_answer.cpp
// clears it otherwise). When a reload takes that trust away, the entries it let in
// still carry AD; they must not be answered with it, fresh or stale. The cache does not
// record which zone an entry came from, so the cut is by time: an entry inserted at or
// before `after()` (wall-clock seconds, the cache's clock) is answered without AD
// (cache::ResponseOptions::ad_trusted_after). The supervisor moves the cut:
//   - at start, to the second before this one unless every name is in a trusted zone
//     (what an earlier run cached under another config is not known; this run's own
//     first answers keep their AD);
//   - at a reload that takes trust from any name (ad_trust_revoked), to "every entry"
//     (UINT32_MAX) while the retired workers, which still run the old config, drain;
//     then, once the last of them has exited, to that second (inclusive: what they
//     inserted in it is covered, and so is what the new workers inserted in it).
// So AD goes out only on entries inserted under a config that trusts their upstream.
// What a cut costs: entries of zones still trusted, inserted before it (or in its
// second), lose AD until they are fetched again (at most their TTL); AD is a claim a
// resolver may always leave out. NOTE: a per-entry zone or trust generation would spare them, at the price of a
// field in the entry format (a format bump); revocations are rare operator actions.
// NOTE: a wall clock stepped back across a reload lets entries inserted before the cut
// (at a later clock reading) keep AD until they expire.
//
// Cost on the hit path: the answer writer compares the entry's insert time with the cut
// only when the entry has AD; the cut is one relaxed load of a line written only by
// reloads.
//
// Memory: an anonymous shared mapping of one page made by the supervisor before the
// first fork (as upstream_claims.hpp).
//   offset  size  field  meaning
//   0       4     after  wall-clock seconds; 0: no cut (every cached AD is vouched for)
// Concurrency: the supervisor stores, workers load; relaxed (a worker that reads the old
// cut for a moment answers as it did before the reload).
#pragma once
#include "common/anonymous_mapping.hpp"
#include "workers/serve_config.hpp"

#include <atomic>
#include <cstdint>

namespace dnsarena::workers {

class AdTrustCut {
public:
  static constexpr std::uint32_t kEveryEntry = UINT32_MAX;
  // Throws std::system_error when mmap fails.
  explicit AdTrustCut(bool shared)
      : map_(4096, shared, "AD trust cut"), after_(static_cast<std::atomic<std::uint32_t>*>(map_.data())) {}
  std::uint32_t after() const { return after_->load(std::memory_order_relaxed); }
  void set(std::uint32_t after) { after_->store(after, std::memory_order_relaxed); }

private:
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
                "shared between processes: only lock-free atomics are address-free");
  common::AnonymousMapping map_;
  std::atomic<std::uint32_t>* after_;
};

// Whether every name is in a zone whose AD is trusted ("." is a zone, every zone trusted).
bool trusts_every_name(const ServeConfig& cfg);
// Whether some name whose AD `before` trusted is not trusted by `after` (its zone's
// trust_ad went off, another zone without trust now holds it, or no zone does).
bool ad_trust_revoked(const ServeConfig& before, const ServeConfig& after);

}  // namespace dnsarena::workers

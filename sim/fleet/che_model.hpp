// SPDX-License-Identifier: GPL-3.0-or-later
// Che's approximation with TTLs: the analytical cross-check of the cache curves.
//
// Model (LRU with non-resetting TTLs, after Che et al. 2002 and Fofack et al. 2014):
// each key k is requested as a Poisson stream of rate l_k. The cache has one
// characteristic time t_C such that the expected number of keys in the cache equals
// its capacity C. A key with TTL T:
//   T <= t_C  (expires before it would be evicted): in cache and hit with probability
//             l_k*T / (1 + l_k*T) (renewal: T in cache, then 1/l_k until the next miss);
//   T >  t_C  (evicted first): 1 - exp(-l_k * t_C).
// If all keys fit with t_C = infinity the cache never fills (TTL-bound plateau).
// Keys: Zipf names (ranks 1..2000 exactly, then log-spaced bins 1% wide) x qtype mix
// x (ECS names: one key per active subnet) x TTL buckets x negative share.
//
// It describes the steady state only (the plateau), and LRU rather than our FIFO with
// second chance; the difference to the real cache is reported, not hidden.
// Cost: ~3,000 rank bins x keys classes per evaluation, ~100 bisection steps.
#pragma once
#include <cstdint>
#include <optional>

#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct CheEstimate {
  double hit_rate = 0;
  double entries = 0;           // expected live entries at the plateau
  double characteristic_s = 0;  // t_C (infinity when the cache never fills)
  bool fills = false;
  double ecs_entry_share = 0;   // share of live entries that are ECS-keyed
  double entries_per_name = 0;  // live entries per distinct name present
};

// `seed`: the trace's seed (sampled_trace.hpp). With it, the top names (exact bins) that
// are not ECS-keyed take their own keys' TTLs, as the cache run sees them; the few most
// popular keys carry a large share of requests, so the luck of their TTLs moves the hit
// rate by points. Without it, every name has the profile's average key classes.
CheEstimate che_estimate(const TrafficProfile& t, double rate_qps, std::uint64_t capacity,
                         std::optional<std::uint64_t> seed = std::nullopt);

}  // namespace dnsarena::sim::fleet

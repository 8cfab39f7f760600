// SPDX-License-Identifier: GPL-3.0-or-later
// Cold-start curves of one instance, from the REAL cache on a sampled trace.
//
// Purpose: how many entries an instance holds, and its hit rate, t minutes after a
// restart (cold start, fill, TTL expiry, eviction at capacity), for one datacenter
// profile, one capacity and one query rate.
//
// Model: SHARDS-style spatial sampling (sampled_trace.hpp) with a thinned head: the
// top K names by Zipf rank are always simulated (their keys at a thinned rate, each
// request standing for several), the tail names are sampled at rate
// R = sample_entries / capacity. K is sized so the head's expected resident keys (not
// its possible keys: an ECS name has one per subnet) fill at most 1/8 of the sampled
// cache (and K <= 1024); ECS head keys are built per request, the others once. Head and tail share one cache::Cache on a private
// segment with max_entries = H + R * (capacity - H), H = expected head entries at the
// plateau (TTL-only: a key at lambda with TTL T is present lambda*T/(1+lambda*T) of the
// time). A simulated clock is passed as `now` (requests evenly spaced at the trace's
// rate). A miss inserts the key's answer (deterministic records of the profile's mix),
// like a resolver after its upstream answered. Counts are scaled back with weights:
// a head request counts its thinning weight w (a miss: 1 miss and w - 1 hits), head
// inserts and entries count 1; tail requests, hits, inserts and entries 1/R.
//
// Approximation and error: a sampled cache of H + R(C - H) matches a cache of C exactly
// only when the head holds H entries; while the head holds h < H (early in the cold
// start, or a head below its TTL-only expectation) the tail gets H - h extra sampled
// slots, (H - h)/R at full scale; H is at most 1/8 of the sampled cache, so the error
// is bounded by that share of capacity and is far smaller once the head has filled.
// Head entries are counted as linked once inserted (a hot key's expired entry is
// replaced on its next miss; evictions of head keys are not tracked). Keeping the head
// removes the main variance of name-level sampling (a very popular name in or out of
// the sample): at R = 0.1 vs 0.4 on a 300k-name, Zipf 0.9 profile the plateau hit
// rates agree within 2 points (tests/fleet/cache_curve_test.cpp; 2.6 points apart when
// all names were sampled). With thinning, R = 0.1 against no sampling at all on a
// 600k-name copy of the ordinary datacenter: 0.3991 vs 0.3930.
//
// Output per minute k since the restart (k = 0 is the restart itself: empty, hit rate 0):
// live entries, hit rate during minute k, cumulative inserts. The run stops when the
// curve has reached a plateau or after max_days; beyond its end the
// curve is its plateau (mean of the last hour). Plateau: entries and the hourly hit rate
// moved < 1% / 0.5 points over a window W, checked hourly from max(3 h, W + 1 h, 2 x
// horizon) on; the horizon is how long an entry can matter: the longest TTL or, when the
// cache fills, 2 x Che's characteristic time (an entry not hit within t_C is evicted),
// whichever is shorter; W is the horizon in whole hours, 1 to 6.
//
// Serve-stale and outages: with `outage_minutes`, the run includes an upstream outage
// of that many minutes, starting at minute `outage_start_minute` of the curve, or, when
// that is 0, after the curve's end (its plateau: the state most instances are in). During
// the outage a request is looked up (Cache::lookup, reading the entry's expiry) and
// nothing is inserted: a hit is answered fresh; an expired entry the arena still holds
// is answered stale while now - expiry < stale_max_age_s; anything else (a miss, an
// entry expired longer ago, stale off) fails (SERVFAIL). The log reclaims as before
// (expired entries dropped first), so the stale window is what the arena still holds.
// Head requests count their full thinning weight during the outage (no insert makes the
// next w - 1 hit). outage_fresh / outage_stale are the shares per outage minute.
//
// Prefetch (prefetch_percent > 0): lookups read the entry (Cache::lookup); a hit with
// less than prefetch_percent of its TTL left re-inserts the key's answer at once (the
// background refresh, one upstream query, counted in prefetch_rate), so a name asked
// often enough never expires in front of clients. A thinned head key is seen at 1/w of
// its rate, so its last-percent window is hit less often than in full: when one of its
// requests finds its entry expired, the share q = 1 - exp(-l p T) of that miss (the
// chance that its full stream, rate l, asked within the last p of the TTL T) counts as a
// hit and a refresh instead (in expectation, not per request).
//
// Costs: O(head keys + R * names) to build the trace, then one CacheLabHooks::probe_at (and on a
// miss one insert_encoded_held, the writer lock held for the minute) per sampled request,
// in batches of 16 whose index buckets are prefetched two batches ahead (the trace's
// alias cells one batch ahead); speed is reported as sampled requests per second of the
// curve's thread CPU time (docs/simulator.md, Commands: requests_per_s_per_core beside
// the machine's limit for this memory pattern).
#pragma once
#include <cstdint>
#include <vector>

#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct CurveRequest {
  const TrafficProfile* traffic = nullptr;
  std::uint64_t capacity = 0;
  double rate_qps = 0;
  std::uint32_t sample_entries = 32'768;
  double max_sample_rate = 1.0;
  std::uint32_t max_days = 14;
  std::uint64_t seed = 1;
  std::uint32_t stale_max_age_s = 86'400;  // serve's stale.max_age_s; 0 = no stale answers
  double prefetch_percent = 0;             // serve's prefetch.percent; 0 = off
  std::uint32_t outage_minutes = 0;        // 0 = no outage
  std::uint32_t outage_start_minute = 0;   // 0 = after the curve's end; else its first minute (>= 1)
};

struct OccupancyCurve {
  std::vector<float> entries;   // live entries (full scale) at the end of minute k
  std::vector<float> hit_rate;  // hit rate during minute k (smoothed over <= 31 minutes)
  std::vector<float> hit_rate_raw;  // hit rate during minute k, not smoothed (noisy at low R)
  std::vector<float> inserted;  // inserts since the restart (full scale), end of minute k
  std::vector<float> unexpired; // linked entries whose TTL has not ended (full scale); entries
                                // counts expired ones too until the log reclaims them
  double plateau_entries = 0, plateau_unexpired = 0, plateau_hit_rate = 0, plateau_inserts_per_min = 0;
  bool reached_plateau = false;
  double sample_rate = 1;               // R: sampling rate of the tail names
  std::uint64_t head_names = 0;        // K: top names simulated in full
  double head_expected_entries = 0;    // expected head entries at the plateau (TTL-only)
  std::uint64_t sampled_capacity = 0;
  std::uint64_t sampled_requests = 0;  // cache lookups performed
  double run_seconds = 0;              // CPU time of the cache run (its thread's)
  double mean_entry_bytes = 0;         // mean padded arena bytes of this profile's entries
  double memory_accesses = 0;          // random cache-line accesses of the run (access_limit.hpp)
  std::uint64_t segment_bytes = 0;     // the private segment's size
  // Prefetch: background refreshes per request during minute k (smoothed as hit_rate;
  // empty when prefetch is off), and its plateau mean. Upstream queries = misses + these.
  std::vector<float> prefetch_rate;
  double plateau_prefetch_rate = 0;
  // The outage (CurveRequest::outage_minutes; empty without one): per outage minute, the
  // shares of requests answered fresh and stale; the rest failed. outage_start: the curve
  // minute it began (entries.size() when it ran after the curve's end).
  std::vector<float> outage_fresh, outage_stale;
  std::uint32_t outage_start = 0;

  double entries_at(std::size_t minute) const { return minute < entries.size() ? entries[minute] : plateau_entries; }
  double hit_rate_at(std::size_t minute) const { return minute < hit_rate.size() ? hit_rate[minute] : plateau_hit_rate; }
  double prefetch_rate_at(std::size_t minute) const {
    return minute < prefetch_rate.size() ? prefetch_rate[minute] : plateau_prefetch_rate;
  }
  double inserted_at(std::size_t minute) const {
    if (minute < inserted.size()) return inserted[minute];
    return inserted.back() + plateau_inserts_per_min * static_cast<double>(minute - inserted.size() + 1);
  }
};

// Runs the real cache. Thread-safe (each call has its own private segment: an anonymous
// mapping with transparent huge pages, cache::Segment::create_private).
OccupancyCurve compute_curve(const CurveRequest& req);

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// What this machine can do for the curve runs' memory pattern: the measured limit
// beside `requests_per_s_per_core`.
//
// Purpose: a curve run (cache_curve.hpp) is memory-bound: each sampled request touches a
// few cache lines at random places of its private segment (index buckets, an entry, and,
// after a miss, the buckets of the entry its insert reclaims). Its requests are
// independent, and the run keeps many of them in flight (prefetching one batch ahead),
// so the machine's limit is its rate of INDEPENDENT random accesses over a buffer of the
// segment's size (memory-level parallelism), not the latency of one.
//
// Measure: K pointer chains (K = 8 and 16) through one random cycle of 64-byte lines over
// an anonymous mapping with transparent huge pages (as cache::Segment::create_private),
// advanced in lock step, so K loads are in flight; nanoseconds of THREAD CPU time per
// access (the same clock as requests_per_s_per_core), the faster K. The dependent chain
// (K = 1) is measured too, for comparison.
//
// Limit: requests/s = 1e9 / (accesses per request x ns per access), accesses per request
// counted by the curve runs (OccupancyCurve::memory_accesses): 2 index buckets per
// lookup, +1 entry line when a slot's tag matches (hit or expired), +1 alias-table cell
// per tail request (sampled_trace.hpp; a table of a few MB, counted as if in the
// segment), +2 buckets per insert (the entry that the insert's reclaim evicts or moves,
// in steady state one per insert). Appends to the head region and reclaim's walk of a
// region are sequential and not counted. The limit is an upper bound: it assumes every
// access overlaps with others and no instruction work at all.
//
// Costs: building the cycle is O(bytes / 64) (a shuffle); the chase `steps` accesses.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dnsarena::sim::fleet {

struct AccessRate {
  double bytes = 0;            // the buffer's size
  double dependent_ns = 0;     // one chain: latency
  double independent_ns = 0;   // the faster of 8 and 16 chains: the MLP limit
};

AccessRate measure_access_rate(std::size_t bytes, std::uint64_t seed, std::size_t steps = 4'000'000);

struct RequestRateLimit {
  AccessRate access;
  double accesses_per_request = 0;
  double requests_per_s = 0;  // 1e9 / (accesses_per_request x access.independent_ns)
};

// The limit for curves that made `accesses` memory accesses over `requests` sampled
// requests, on segments of `segment_bytes` (request-weighted mean).
RequestRateLimit request_rate_limit(double accesses, double requests, double segment_bytes, std::uint64_t seed);

}  // namespace dnsarena::sim::fleet

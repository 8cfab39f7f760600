// Cold-start curves of one instance, from the REAL cache on a sampled trace.
//
// Purpose: how many entries an instance holds, and its hit rate, t minutes after a
// restart (cold start, fill, TTL expiry, eviction at capacity), for one datacenter
// profile, one capacity and one query rate.
//
// Model: SHARDS-style spatial sampling (sampled_trace.hpp) at rate R = sample_entries /
// capacity; a cache::Cache on a private segment with max_entries = capacity * R; a
// simulated clock passed as `now` (requests evenly spaced at the sampled rate). A miss
// inserts the key's answer (deterministic records of the profile's mix), like a
// resolver after its upstream answered. Counts are scaled back by 1/R.
//
// Output per minute k since the restart (k = 0 is the restart itself: empty, hit rate 0):
// live entries, hit rate during minute k, cumulative inserts. The run stops when the
// curve has reached a plateau (entries and hit rate move < 1% / 0.5 points over six
// hours, after at least twice the longest TTL) or after max_days; beyond its end the
// curve is its plateau (mean of the last hour).
//
// Costs: O(R * names) to build the trace, then one lookup (and on a miss one insert)
// per sampled request; speed is reported as sampled cache requests per second.
#pragma once
#include <cstdint>
#include <vector>

#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct CurveRequest {
  const TrafficProfile* traffic = nullptr;
  std::uint64_t capacity = 0;
  double rate_qps = 0;
  std::uint32_t sample_entries = 4'096;
  double max_sample_rate = 1.0;
  std::uint32_t max_days = 14;
  std::uint64_t seed = 1;
};

struct OccupancyCurve {
  std::vector<float> entries;   // live entries (full scale) at the end of minute k
  std::vector<float> hit_rate;  // hit rate during minute k (smoothed over <= 31 minutes)
  std::vector<float> inserted;  // inserts since the restart (full scale), end of minute k
  std::vector<float> unexpired; // linked entries whose TTL has not ended (full scale); entries
                                // counts expired ones too until the log reclaims them
  double plateau_entries = 0, plateau_unexpired = 0, plateau_hit_rate = 0, plateau_inserts_per_min = 0;
  bool reached_plateau = false;
  double sample_rate = 1;
  std::uint64_t sampled_capacity = 0;
  std::uint64_t sampled_requests = 0;  // cache lookups performed
  double run_seconds = 0;              // wall time of the cache run
  double mean_entry_bytes = 0;         // mean padded arena bytes of this profile's entries

  double entries_at(std::size_t minute) const { return minute < entries.size() ? entries[minute] : plateau_entries; }
  double hit_rate_at(std::size_t minute) const { return minute < hit_rate.size() ? hit_rate[minute] : plateau_hit_rate; }
  double inserted_at(std::size_t minute) const {
    if (minute < inserted.size()) return inserted[minute];
    return inserted.back() + plateau_inserts_per_min * static_cast<double>(minute - inserted.size() + 1);
  }
};

// Runs the real cache. Thread-safe (each call has its own private segment).
OccupancyCurve compute_curve(const CurveRequest& req);

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// Memoized cold-start curves: each distinct (datacenter, capacity, rate bucket) curve is
// computed once from the real cache (cache_curve.hpp) and shared by every instance in it.
//
// Rate buckets: an instance's query rate is rounded to the nearest median * 2^(k/3)
// (26% apart: within -11%..+12% of its own) for its occupancy and hit-rate curve; its
// upstream queries use its own rate. (2^(k/4) cost a third more curves: 81 instead of
// 62 on configs/fleet/large.yaml, whose plateaus are capacity-bound.)
// Curves are computed in parallel (oneTBB), each on its own private segment.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "cache_curve.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct CurveKey {
  std::size_t dc = 0;
  std::uint64_t capacity = 0;
  int bucket = 0;  // rate = median * 2^(bucket/kBucketsPerOctave)
  auto tie() const { return std::tie(dc, capacity, bucket); }
  bool operator<(const CurveKey& o) const { return tie() < o.tie(); }
};

inline constexpr double kBucketsPerOctave = 3.0;
int rate_bucket(double median, double rate);
// The trace seed of every curve of datacenter `dc` (same sampled names and key traits).
std::uint64_t curve_seed(const FleetConfig& fleet, std::size_t dc);
double bucket_rate(double median, int bucket);

class CurveStore {
public:
  explicit CurveStore(const FleetConfig& fleet) : fleet_(fleet), outage_minutes_(fleet.datacenters.size(), 0) {}
  // Curves of datacenter `dc` computed from now on run an upstream outage of `minutes`
  // after their end (cache_curve.hpp). REQUIRES: no curve of `dc` computed yet.
  void set_outage_minutes(std::size_t dc, std::uint32_t minutes);
  // Computes every missing curve of `keys`, in parallel.
  void compute(const std::vector<CurveKey>& keys);
  // REQUIRES: compute() ran for key.
  const OccupancyCurve& get(const CurveKey& key) const;
  // Computes one curve at an exact rate (not memoized by bucket).
  OccupancyCurve compute_at(std::size_t dc, std::uint64_t capacity, double rate) const;
  // The same with an outage of `outage_minutes` after the curve's end.
  OccupancyCurve compute_at(std::size_t dc, std::uint64_t capacity, double rate, std::uint32_t outage_minutes) const;
  std::uint64_t sampled_requests() const;
  double cache_seconds() const;
  // Random memory accesses of the curve runs, and their segments' size weighted by
  // requests (access_limit.hpp).
  double memory_accesses() const;
  double request_weighted_segment_bytes() const;
  std::size_t size() const { return curves_.size(); }

private:
  const FleetConfig& fleet_;
  std::map<CurveKey, std::shared_ptr<OccupancyCurve>> curves_;
  std::vector<std::uint32_t> outage_minutes_;  // per datacenter
};

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// `sim rollout --curves [DC=]FILE...`: the rollout model's hit rates from measured
// miss-ratio curves (measured_curve.hpp) instead of the traffic profile's model.
//
// Model: the fleet model's cold-start curve of an instance (curve_store.hpp) gives the
// shape of its hit rate from a restart to its plateau; a datacenter with measured curves
// keeps that shape and has its plateau set to the measured hit rate at the curve's
// capacity (read off its hosts' curves, request-weighted, as `sim tune --curves`):
//   hit(age) = min(1, model hit(age) x measured(capacity) / model plateau(capacity)).
// So the before- and after-capacities of a plan (a "reinvest" or "factor" capacity
// change) are at the hit rates the live curves measured there. The RSS stays the model's
// (entries and inserts by age). A capacity outside the measured factors is an error
// before any curve runs (no extrapolation). Datacenters without curves keep the model's.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "cache_curve.hpp"
#include "fleet_config.hpp"
#include "measured_curve.hpp"

namespace dnsarena::sim::fleet {

class MeasuredPlateaus {
public:
  MeasuredPlateaus() = default;  // none: every datacenter keeps the model's hit rates
  MeasuredPlateaus(const FleetConfig& fleet, std::vector<DatacenterCurves> curves);

  bool empty() const { return names_.empty(); }
  std::vector<std::string> datacenters() const { return names_; }
  // Throws CurveFileError when datacenter d has curves and `capacity` is beyond their range.
  void require_in_range(std::size_t d, std::uint64_t capacity) const;
  // The hit rate at `age` of curve `c` of datacenter d at `capacity` (the model's when d
  // has no curves). REQUIRES: require_in_range(d, capacity) passed.
  double hit_rate_at(std::size_t d, std::uint64_t capacity, const OccupancyCurve& c, std::size_t age) const;
  // The measured plateau of datacenter d at `capacity` (nullopt: no curves).
  std::optional<double> plateau(std::size_t d, std::uint64_t capacity) const;

private:
  const DatacenterCurves* curves(std::size_t d) const;  // nullptr: none for d
  std::vector<std::optional<DatacenterCurves>> by_dc_;  // by the fleet's datacenter index
  std::vector<std::string> names_;
};

}  // namespace dnsarena::sim::fleet

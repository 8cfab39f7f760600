// SPDX-License-Identifier: GPL-3.0-or-later
#include "measured_rollout.hpp"

#include <algorithm>
#include <cstdio>

namespace dnsarena::sim::fleet {

MeasuredPlateaus::MeasuredPlateaus(const FleetConfig& fleet, std::vector<DatacenterCurves> curves)
    : by_dc_(fleet.datacenters.size()) {
  for (DatacenterCurves& c : curves)  // group_by_datacenter: each names a datacenter of the fleet
    for (std::size_t d = 0; d < fleet.datacenters.size(); ++d)
      if (fleet.datacenters[d].name == c.datacenter) {
        names_.push_back(c.datacenter);
        by_dc_[d] = std::move(c);
        break;
      }
}

const DatacenterCurves* MeasuredPlateaus::curves(std::size_t d) const {
  return d < by_dc_.size() && by_dc_[d] ? &*by_dc_[d] : nullptr;  // a default one has no rows
}

void MeasuredPlateaus::require_in_range(std::size_t d, std::uint64_t capacity) const {
  if (!curves(d)) return;
  const DatacenterCurves& c = *curves(d);
  const CurveReading r = c.at(static_cast<double>(capacity)).curve;
  if (r.in_range) return;
  char t[96];
  std::snprintf(t, sizeof t, "capacity %llu is %gx the hosts' %llu: ", static_cast<unsigned long long>(capacity),
                static_cast<double>(capacity) / static_cast<double>(c.capacity()),
                static_cast<unsigned long long>(c.capacity()));
  throw CurveFileError(c.hosts.front().source + " (datacenter " + c.datacenter + "): " + t + r.bracket());
}

std::optional<double> MeasuredPlateaus::plateau(std::size_t d, std::uint64_t capacity) const {
  if (!curves(d)) return std::nullopt;
  return curves(d)->at(static_cast<double>(capacity)).curve.hit_rate;
}

double MeasuredPlateaus::hit_rate_at(std::size_t d, std::uint64_t capacity, const OccupancyCurve& c,
                                     std::size_t age) const {
  const std::optional<double> measured = plateau(d, capacity);
  if (!measured) return c.hit_rate_at(age);
  if (!(c.plateau_hit_rate > 0)) return *measured;  // no shape to keep
  return std::min(1.0, c.hit_rate_at(age) * *measured / c.plateau_hit_rate);
}

}  // namespace dnsarena::sim::fleet

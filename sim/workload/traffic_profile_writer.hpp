// SPDX-License-Identifier: GPL-3.0-or-later
// Writing a traffic profile as YAML in the schema traffic_profile.hpp reads, every key
// present, numbers in their shortest form that reads back to the same double, so that
// parse_traffic_profile(traffic_profile_yaml(p)) == p. Used by `sim fit` (sim/fit/).
#pragma once
#include <string>

#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim {

// The profile as a top-level YAML mapping (no comments; a caller may prepend its own).
std::string traffic_profile_yaml(const TrafficProfile& p);

}  // namespace dnsarena::sim

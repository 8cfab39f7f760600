// SPDX-License-Identifier: GPL-3.0-or-later
// The golden fleet runs' calibration: fixed byte counts per layout (test data, so a golden
// file does not move when the layouts code is re-measured; `sim rollout` itself always
// measures), and reading a written CSV back.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/fleet/rollout_sim.hpp"

namespace dnsarena::test {

// v0 950/1,100 and the arena 190 bytes per entry, each 40 more per unit of ECS share.
inline sim::fleet::LayoutMeasurer fixed_measurer() {
  return [](const sim::TrafficProfile& p, std::uint64_t, std::uint64_t) {
    const double extra = 40.0 * p.ecs_share;
    return std::vector<sim::fleet::LayoutBytes>{{"v0", 950 + extra, 1100 + extra}, {"arena", 190 + extra, 190 + extra}};
  };
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace dnsarena::test

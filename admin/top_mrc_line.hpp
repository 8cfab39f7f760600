// SPDX-License-Identifier: GPL-3.0-or-later
// The miss-ratio curve's line in `dnsarena top`: the live cache's hit rate now, and the
// hit rate the curve predicts at each capacity factor it measures (workers/
// miss_ratio_curves.hpp; 1/8x .. 8x by default), read from the JSON snapshot the
// supervisor publishes once a second beside the segment (workers/mrc_report.hpp: its
// "models" with "factor" and "hit_rate"; common/snapshot_file.hpp: where it lives).
//
//   mrc  now 78.0%  0.125x 41.2%  0.25x 55.0%  0.5x 71.2%  1x 78.0%  2x 83.1%  4x 85.4%  8x 86.0%
//   mrc  off (no curve for segment 'dnsarena': serve runs with mrc.enabled false, or is not running)
//
// A snapshot left by a supervisor that no longer runs is shown with "(serve not running;
// as of N s ago)". Costs one small file read.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dnsarena::admin {

struct TopMrc {
  std::string segment;
  double hit_rate_now = 0;                         // the live cache's hits / lookups
  std::vector<std::pair<double, double>> points;   // (factor, predicted hit rate); empty: off
  std::string off_reason;                          // why there are no points
  double age_s = 0;
  bool supervisor_running = false;
};

// The curve of `segment` (none when no snapshot is published or it holds no usable point).
TopMrc read_top_mrc(const std::string& segment, double hit_rate_now);
std::string top_mrc_line(const TopMrc& m);
// {"enabled": false, "reason"} or {"enabled": true, "hit_rate_now", "age_s",
//  "supervisor_running", "points": [{"factor", "hit_rate"}, ...]}
nlohmann::json top_mrc_json(const TopMrc& m);

}  // namespace dnsarena::admin

// SPDX-License-Identifier: GPL-3.0-or-later
// `sim tune` from measured miss-ratio curves (`--curves [DC=]FILE...`, `--segment
// [DC=]NAME...`) in place of the traffic profile's model: per datacenter, the largest
// capacity whose p99 RSS fits the memory budget minus headroom, and the hit rate and
// upstream queries that capacity buys, read off the hosts' curves (measured_curve.hpp).
//
// Memory: an instance is its process memory (the fleet file's process_gb) and its cache
// segment. The segment is sized at start for its capacity and the arena is a ring: once
// the log has wrapped, every page of it has been written and stays resident, so the
// planning figure is the whole segment, the same on every host of a datacenter (one
// geometry), which makes it the p99 too. A segment at f times the capacity is f x S (S:
// the host's segment, "real_segment_bytes"; the header and stat slots that do not scale
// are < 1% of it). So the tuned capacity is in closed form, no search:
//   f = (budget x (1 - headroom) - process_gb) / S,   capacity = f x C,
// rounded down to 3 significant digits. NOTE: the profile path (tune_sim.hpp) models the
// resident bytes of a cache that is still filling; a measured curve carries no fill
// history, so it plans for the full segment, which is an upper bound on the RSS.
//
// Hit rate and upstream q/s at the current capacity C and at the tuned one are read off
// the curves (interpolated in log capacity between the measured factors that bracket
// it); a tuned capacity outside the measured factors gets no hit rate: the row says
// "beyond measured range" with the nearest measured value, and the capacity that fits
// is still printed.
#pragma once
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fleet_config.hpp"
#include "measured_curve.hpp"

namespace dnsarena::sim::fleet {

struct MeasuredTuneRow {
  std::string datacenter;
  std::vector<std::string> hosts;  // the curves' sources
  std::uint64_t current_capacity = 0, tuned_capacity = 0;
  double tuned_factor = 0;  // tuned / current
  double budget_gb = 0, limit_gb = 0, process_gb = 0;
  double p99_rss_current_gb = 0, p99_rss_tuned_gb = 0, memory_freed_gb = 0;
  CurveReading current, tuned;  // hit rates (tuned.in_range false: beyond measured range)
  std::optional<double> queries_per_s, upstream_qps_current, upstream_qps_tuned;
  std::string note;
};

std::vector<MeasuredTuneRow> tune_from_curves(const FleetConfig& fleet, const std::vector<DatacenterCurves>& curves,
                                              double headroom);

// The table on `report`, DIR/tune.csv, and with `json` the rows as one JSON array on stdout.
void report_measured_tune(const FleetConfig& fleet, const std::vector<MeasuredTuneRow>& rows, double headroom,
                          const std::string& out_dir, FILE* report, bool json);

// The curve of a live segment: `dnsarena stats --mrc --json --segment NAME` (the daemon
// beside this program), whose 1 s interval gives the host's query rate. Throws
// CurveFileError naming the segment when it fails.
MeasuredCurve read_live_curve(const std::string& segment);

}  // namespace dnsarena::sim::fleet

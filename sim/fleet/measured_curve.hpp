// SPDX-License-Identifier: GPL-3.0-or-later
// Miss-ratio curves measured on live hosts, as input to the fleet model (`sim tune
// --curves`, `sim rollout --curves`): what one file holds, how it is checked, and how a
// hit rate is read off it at a capacity.
//
// Input: the JSON document `dnsarena stats --mrc --json` prints (workers/mrc_report.hpp),
// one per host: "real_max_entries" C, "real_arena_bytes" A, "real_segment_bytes" S (the
// host's cache geometry), "models": [{"factor": f, "hit_rate": h, "requests": n}, ...]
// (factors ascending, 1/8 .. 8 by default), "queries_per_s" (the host's query rate over
// stats' --interval; null with --interval 0) and, optionally, "datacenter" (a field the
// operator adds, e.g. with jq; `--curves DC=FILE` names it instead).
// Checked strictly: not JSON, a missing or mistyped field, factors not ascending, a hit
// rate outside [0, 1], no model, or no request fed yet are errors naming the file.
//
// Reading at a capacity c (entries): f = c / C, and the hit rate is interpolated
// linearly in log f between the two measured factors that bracket f (hit rate curves are
// close to straight in log capacity over a factor of 2). A factor outside the measured
// range is not extrapolated: the reading says "beyond measured range".
//
// A datacenter's hosts (DatacenterCurves) must share one geometry and one set of factors
// (another geometry is an error naming both files): the capacity is the same number of
// entries on each. Its hit rate is request-weighted over its hosts by queries_per_s (each
// host alike when a file has no rate, and then upstream q/s are unknown; alike too when
// every rate is 0, with 0 upstream q/s).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

// A bad curve file (the message names it).
struct CurveFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct MeasuredPoint {
  double factor = 0, hit_rate = 0;
};

struct MeasuredCurve {
  std::string source;      // the file (or "segment NAME") the messages name
  std::string datacenter;  // "" when neither the file nor the command line says
  std::uint64_t capacity = 0, arena_bytes = 0, segment_bytes = 0;  // C, A, S
  std::optional<double> queries_per_s;
  std::vector<MeasuredPoint> points;  // factor ascending
};

// The document `doc` read from `source` (throws CurveFileError).
MeasuredCurve parse_measured_curve(const nlohmann::json& doc, const std::string& source);
// The file `path` (throws CurveFileError: unreadable, not JSON, or as above).
MeasuredCurve load_measured_curve(const std::string& path);

// A hit rate read off a curve at factor f.
struct CurveReading {
  bool in_range = false;  // false: f outside the measured factors (hit_rate unset)
  double hit_rate = 0;
  double lo = 0, hi = 0;  // the measured factors bracketing f (equal at a measured one)
  std::string bracket() const;  // "2x..4x", "at 1x", "beyond measured range (0.125x..8x)"
  double measured_min = 0, measured_max = 0;
};
CurveReading read_curve(const std::vector<MeasuredPoint>& points, double factor);

struct DatacenterCurves {
  std::string datacenter;
  std::vector<MeasuredCurve> hosts;
  std::uint64_t capacity() const { return hosts.front().capacity; }
  // Request-weighted hit rate at `capacity` entries and the upstream q/s it leaves
  // (nullopt when a host's rate is unknown); the bracket is the same for every host.
  struct Reading {
    CurveReading curve;  // its hit_rate: the datacenter's
    std::optional<double> queries_per_s, upstream_qps;
  };
  Reading at(double capacity) const;
};

// "[DC=]FILE" (or "[DC=]NAME"): the datacenter part when the text before the first '='
// holds no '/', else none.
std::pair<std::string, std::string> split_datacenter(const std::string& spec);

// `--curves [DC=]FILE...`: each file loaded, its datacenter set from DC= when given.
std::vector<MeasuredCurve> load_curve_specs(const std::vector<std::string>& specs);

// Groups curves by datacenter in the fleet's order. A curve with no datacenter goes to
// the fleet's only one; throws CurveFileError when the fleet has several, when the
// datacenter is not in the fleet, or when a host's geometry or factors differ from its
// datacenter's first host.
std::vector<DatacenterCurves> group_by_datacenter(std::vector<MeasuredCurve> curves, const FleetConfig& fleet);

}  // namespace dnsarena::sim::fleet

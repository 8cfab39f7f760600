// SPDX-License-Identifier: GPL-3.0-or-later
// Predicted against measured for `dnsarena-lab sim validate`: per-minute rows, the plateau
// summary, the human table, the JSON object and the CSV files.
//
// Minute m (1-based) of the run is [60(m-1), 60m) seconds after the first query, and
// matches the model curve's minute m (minute 0 is the restart). Measured per minute:
// live entries and service Pss at the minute's end, hit rate = hits / queries during the
// minute (validate_service.hpp says why not / lookups), memory = Pss anon + shmem of the
// service (validate_service.hpp says why not all of Pss). Predicted: the curve's entries,
// its unsmoothed hit rate (hit_rate_raw), and RSS.
// Plateau = the last third of the minutes (at least the last one), the same minutes on
// both sides: hit rate over all their queries (predicted: the mean of their minutes),
// entries and RSS the mean of their minute-end values. Errors are predicted - measured:
// points of hit rate, percent of the measured entries and RSS. Targets: 5 points, 10%.
// The RSS error splits in two: the cache's part (memory_model.hpp's resident bytes
// against the segment's resident bytes) and what the processes themselves grew under
// load (Pss anon at the plateau minus before load), which the model's input (process
// memory measured before load) does not contain.
// With an upstream outage: the share of the queries during it answered stale, measured
// (stale_answers / queries between the samples bounding it) against the model's (the
// curve's outage minutes), target 5 points as the hit rate; the queries during the outage
// are left out of the load's unanswered share (they may rightly fail).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate_model.hpp"
#include "validate_service.hpp"

namespace dnsarena::sim::fleet {

inline constexpr double kHitRateTargetPts = 5.0;
inline constexpr double kStaleShareTargetPts = 5.0;
inline constexpr double kRssTargetPct = 10.0;
// Above this share of lost or SERVFAIL queries the measured hit rate is not the cache's.
inline constexpr double kMaxUnansweredShare = 0.005;

struct ValidateSetup {
  std::string profile;  // path, or "(embedded seed)"
  std::uint64_t names = 0;
  double target_rate = 0;
  std::uint32_t duration_s = 0, sample_every_s = 0;  // simulated seconds
  std::uint32_t minute_seconds = 60;                 // real seconds per simulated minute
  double model_qps = 0;                              // the model's rate: achieved x minute_seconds / 60
  std::uint64_t capacity = 0;
  unsigned workers = 0;
  std::uint64_t arena_bytes = 0;
  std::uint32_t region_bytes = 0;
  bool ecs_forward = false;
  std::uint32_t outage_at_s = 0, outage_s = 0;
  std::uint64_t calibration_entries = 0;
  double arena_bytes_per_entry = 0;
  std::vector<std::string> notes;
};

struct MinuteRow {
  unsigned minute = 0;
  double measured_entries = 0, predicted_entries = 0;
  double measured_inserted = 0, predicted_inserted = 0;  // since the first query
  double measured_hit_rate = 0, predicted_hit_rate = 0, predicted_hit_rate_smoothed = 0;
  double measured_rss_bytes = 0, predicted_rss_bytes = 0;  // measured: Pss anon + shmem
  double measured_pss_total_bytes = 0;                      // with the shared file pages
  double segment_resident_bytes = 0, predicted_cache_bytes = 0;
};

struct ValidateReport {
  std::vector<MinuteRow> minutes;
  unsigned plateau_first = 0;  // first minute of the plateau
  double measured_hit_rate = 0, predicted_hit_rate = 0, che_hit_rate = 0;
  double measured_entries = 0, predicted_entries = 0, che_entries = 0;
  double measured_rss_bytes = 0, predicted_rss_bytes = 0;
  double measured_segment_bytes = 0, predicted_cache_bytes = 0;  // the cache's part of RSS alone
  double hit_rate_error_pts = 0, che_hit_rate_error_pts = 0, rss_error_pct = 0, entries_error_pct = 0;
  double cache_resident_error_pct = 0;  // memory_model.hpp against the segment's resident bytes
  double process_growth_bytes = 0;      // plateau - before-load Pss anon (not in the model's input)
  double unanswered_share = 0;  // (lost + SERVFAIL) / sent
  bool load_answered = false;   // unanswered_share <= kMaxUnansweredShare
  bool hit_rate_met = false, rss_met = false;
  // The outage (when the run had one).
  bool outage = false;
  double outage_queries = 0;
  double measured_outage_hit_share = 0, measured_stale_share = 0;  // hits, stale_answers / queries
  double measured_failure_cached_share = 0, measured_deadline_share = 0;
  double predicted_outage_fresh_share = 0, predicted_stale_share = 0;
  double stale_error_pts = 0;
  bool stale_met = true;  // true without an outage
};

ValidateReport compare(const ServiceRun& run, const Prediction& pred, std::uint32_t sample_every_s);

// Where a run's upstream outage goes: whole minutes, starting after the first minute and
// ending before the plateau minutes (the last third, where the hit rate is compared). A
// negative `at_s` asks for the latest start that allows. An outage that does not fit is
// an std::invalid_argument when `given` (the user asked for it), else none, with a note.
struct OutageWindow {
  std::uint32_t at_s = 0, seconds = 0;  // seconds 0: no outage
  std::string note;
};
OutageWindow place_outage(std::uint32_t duration_s, std::uint32_t outage_s, std::int64_t at_s, bool given);

nlohmann::json report_json(const ValidateSetup& s, const ServiceRun& run, const Prediction& pred,
                           const ValidateReport& r, double wall_s);
std::string report_table(const ValidateSetup& s, const ServiceRun& run, const Prediction& pred,
                         const ValidateReport& r, double wall_s);
// DIR/validate_minutes.csv and DIR/validate_samples.csv. Throws on I/O errors.
void write_csv(const std::string& dir, const ServiceRun& run, const ValidateReport& r);

}  // namespace dnsarena::sim::fleet

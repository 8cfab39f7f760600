// SPDX-License-Identifier: GPL-3.0-or-later
#include "measured_tune.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/child_process.hpp"
#include "common/sibling_program.hpp"

namespace dnsarena::sim::fleet {

namespace {

// Rounds down to 3 significant digits (an operator's number), as the profile path does.
std::uint64_t round_down_3(double v) {
  if (v < 1) return 0;
  const double mag = std::pow(10.0, std::floor(std::log10(v)) - 2);
  return static_cast<std::uint64_t>(std::max(1.0, std::floor(v / mag) * mag));
}

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string fixed(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char t[32];
  std::snprintf(t, sizeof t, format, *v);
  return t;
}

}  // namespace

std::vector<MeasuredTuneRow> tune_from_curves(const FleetConfig& fleet, const std::vector<DatacenterCurves>& curves,
                                              double headroom) {
  std::vector<MeasuredTuneRow> rows;
  for (const DatacenterCurves& d : curves) {
    const auto dc = std::find_if(fleet.datacenters.begin(), fleet.datacenters.end(),
                                 [&](const Datacenter& x) { return x.name == d.datacenter; });
    MeasuredTuneRow row;
    row.datacenter = d.datacenter;
    for (const MeasuredCurve& h : d.hosts) row.hosts.push_back(h.source);
    row.current_capacity = d.capacity();
    row.budget_gb = dc->memory_budget_gb;
    row.limit_gb = dc->memory_budget_gb * (1 - headroom);
    row.process_gb = dc->process_gb;
    const double segment_gb = static_cast<double>(d.hosts.front().segment_bytes) / kGB;
    auto rss_at = [&](double capacity) { return row.process_gb + capacity / static_cast<double>(row.current_capacity) * segment_gb; };
    row.tuned_capacity = round_down_3((row.limit_gb - row.process_gb) / segment_gb * static_cast<double>(row.current_capacity));
    row.tuned_factor = static_cast<double>(row.tuned_capacity) / static_cast<double>(row.current_capacity);
    row.p99_rss_current_gb = rss_at(static_cast<double>(row.current_capacity));
    row.p99_rss_tuned_gb = rss_at(static_cast<double>(row.tuned_capacity));
    row.memory_freed_gb = row.p99_rss_current_gb - row.p99_rss_tuned_gb;
    const DatacenterCurves::Reading now = d.at(static_cast<double>(row.current_capacity));
    row.current = now.curve;
    row.queries_per_s = now.queries_per_s;
    row.upstream_qps_current = now.upstream_qps;
    if (row.tuned_capacity == 0) {
      row.note = "does not fit: process_gb alone exceeds the budget minus headroom";
    } else {
      const DatacenterCurves::Reading tuned = d.at(static_cast<double>(row.tuned_capacity));
      row.tuned = tuned.curve;
      row.upstream_qps_tuned = tuned.upstream_qps;
    }
    if (row.tuned_capacity > 0 && !row.tuned.in_range) {
      // The nearest measured end, request-weighted like an in-range reading.
      const double end = row.tuned_factor < row.tuned.measured_min ? row.tuned.measured_min : row.tuned.measured_max;
      const DatacenterCurves::Reading at_end = d.at(end * static_cast<double>(row.current_capacity));
      char t[160];
      std::snprintf(t, sizeof t, "hit rate beyond measured range (%gx..%gx; %.4f at %gx)", row.tuned.measured_min,
                    row.tuned.measured_max, at_end.curve.hit_rate, end);
      row.note = t;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void report_measured_tune(const FleetConfig& fleet, const std::vector<MeasuredTuneRow>& rows, double headroom,
                          const std::string& out_dir, FILE* report, bool json) {
  std::fprintf(report,
               "fleet %s, headroom %.0f%%, from measured miss-ratio curves: largest capacity with p99 RSS <= budget x "
               "(1 - headroom)\n",
               fleet.name.c_str(), 100 * headroom);
  std::fprintf(report, "%-14s %5s %12s %12s %7s %8s %8s %8s %7s %7s %11s %11s %9s  %s\n", "datacenter", "hosts",
               "capacity", "tuned", "factor", "limitGB", "p99GB", "p99GB'", "hit", "hit'", "upstream", "upstream'",
               "freedGB", "read between / note");
  const std::string csv = out_dir + "/tune.csv";
  std::ofstream out(csv);
  out << "datacenter,hosts,current_capacity,tuned_capacity,tuned_factor,budget_gb,limit_gb,p99_rss_current_gb,"
         "p99_rss_tuned_gb,hit_rate_current,hit_rate_tuned,upstream_qps_current,upstream_qps_tuned,memory_freed_gb,"
         "read_between,note\n";
  nlohmann::json array = nlohmann::json::array();
  for (const MeasuredTuneRow& t : rows) {
    auto hit = [](const CurveReading& r) { return r.in_range ? std::optional<double>(r.hit_rate) : std::nullopt; };
    const std::string between = t.tuned_capacity > 0 && t.tuned.in_range ? t.tuned.bracket() : "";
    std::fprintf(report, "%-14s %5zu %12llu %12llu %7.3f %8.2f %8.2f %8.2f %7s %7s %11s %11s %+9.2f  %s%s%s\n",
                 t.datacenter.c_str(), t.hosts.size(), static_cast<unsigned long long>(t.current_capacity),
                 static_cast<unsigned long long>(t.tuned_capacity), t.tuned_factor, t.limit_gb, t.p99_rss_current_gb,
                 t.p99_rss_tuned_gb, fixed(hit(t.current), "%.4f").c_str(), fixed(hit(t.tuned), "%.4f").c_str(),
                 fixed(t.upstream_qps_current, "%.0f").c_str(), fixed(t.upstream_qps_tuned, "%.0f").c_str(),
                 t.memory_freed_gb, between.c_str(), between.empty() || t.note.empty() ? "" : "; ", t.note.c_str());
    auto csv_number = [](const std::optional<double>& v) { return v ? std::to_string(*v) : std::string(); };
    out << t.datacenter << ',' << t.hosts.size() << ',' << t.current_capacity << ',' << t.tuned_capacity << ','
        << t.tuned_factor << ',' << t.budget_gb << ',' << t.limit_gb << ',' << t.p99_rss_current_gb << ','
        << t.p99_rss_tuned_gb << ',' << csv_number(hit(t.current)) << ',' << csv_number(hit(t.tuned)) << ','
        << csv_number(t.upstream_qps_current) << ',' << csv_number(t.upstream_qps_tuned) << ',' << t.memory_freed_gb
        << ',' << between << ",\"" << t.note << "\"\n";
    nlohmann::json bracket = nullptr;
    if (t.tuned_capacity > 0 && t.tuned.in_range) bracket = {{"low_factor", t.tuned.lo}, {"high_factor", t.tuned.hi}};
    array.push_back({{"datacenter", t.datacenter},
                     {"source", "measured curves"},
                     {"hosts", t.hosts},
                     {"current_capacity", t.current_capacity},
                     {"tuned_capacity", t.tuned_capacity},
                     {"tuned_factor", t.tuned_factor},
                     {"budget_gb", t.budget_gb},
                     {"limit_gb", t.limit_gb},
                     {"process_gb", t.process_gb},
                     {"p99_rss_current_gb", t.p99_rss_current_gb},
                     {"p99_rss_tuned_gb", t.p99_rss_tuned_gb},
                     {"hit_rate_current", optional_number(hit(t.current))},
                     {"hit_rate_tuned", optional_number(hit(t.tuned))},
                     {"queries_per_s", optional_number(t.queries_per_s)},
                     {"upstream_qps_current", optional_number(t.upstream_qps_current)},
                     {"upstream_qps_tuned", optional_number(t.upstream_qps_tuned)},
                     {"memory_freed_gb", t.memory_freed_gb},
                     {"in_measured_range", t.tuned_capacity > 0 && t.tuned.in_range},
                     {"measured_factors", {{"min", t.current.measured_min}, {"max", t.current.measured_max}}},
                     {"read_between", bracket},
                     {"note", t.note}});
  }
  std::fprintf(report,
               "(' = at the tuned capacity; p99 RSS = process_gb + the whole segment, f x the hosts' own; hit rates read "
               "off the curves, request-weighted over hosts; '-' = unknown: beyond the measured range, or a file "
               "without queries_per_s; wrote %s)\n",
               csv.c_str());
  if (json) std::cout << array.dump() << std::endl;
}

MeasuredCurve read_live_curve(const std::string& segment) {
  const std::string source = "segment " + segment;
  int status = 0;
  const std::string out = common::run_and_capture(
      {common::daemon_program(), "stats", "--mrc", "--json", "--interval", "1", "--segment", segment}, status);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw CurveFileError(source + ": `dnsarena stats --mrc --json --segment " + segment +
                         "` failed (its message above; is serve running there, with mrc.enabled?)");
  const nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
  if (doc.is_discarded()) throw CurveFileError(source + ": `dnsarena stats --mrc --json` printed no JSON");
  return parse_measured_curve(doc, source);
}

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim tune --fleet F [--headroom 0.1] [--layout L] [--reinvest-layout L2] [--out DIR] [--json]`
// `dnsarena-lab sim tune --fleet F --curves [DC=]FILE... | --segment [DC=]NAME... [--headroom 0.1]`:
// from measured miss-ratio curves instead of the profile's model (measured_tune.hpp).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "calibration.hpp"
#include "chart.hpp"
#include "distributed_run.hpp"
#include "fleet_commands.hpp"
#include "measured_tune.hpp"
#include "sim/command_options.hpp"
#include "tune_sim.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct TuneArgs : FleetRunOptions {
  std::string layout, reinvest = "arena";
  double headroom = 0.1;
  OutageGoal outage;
  std::vector<std::string> curves, segments;  // [DC=]FILE, [DC=]NAME: measured curves
};

// --curves / --segment: the hosts' curves grouped by datacenter, then measured_tune.hpp.
void run_measured(const TuneArgs& a) {
  const FleetConfig fleet = load_fleet(a.fleet);
  std::vector<MeasuredCurve> hosts = load_curve_specs(a.curves);
  for (const std::string& spec : a.segments) {
    auto [dc, segment] = split_datacenter(spec);
    hosts.push_back(read_live_curve(segment));
    if (!dc.empty()) hosts.back().datacenter = dc;
  }
  const std::vector<DatacenterCurves> curves = group_by_datacenter(std::move(hosts), fleet);
  std::filesystem::create_directories(a.out);
  report_measured_tune(fleet, tune_from_curves(fleet, curves, a.headroom), a.headroom, a.out,
                       a.json ? stderr : stdout, a.json);
}

void run(const TuneArgs& a) {
  if (!a.curves.empty() || !a.segments.empty()) return run_measured(a);
  // With --json, stdout carries the one JSON document alone; the human report goes to stderr.
  FILE* const report = a.json ? stderr : stdout;
  const FleetConfig fleet = load_fleet(a.fleet);
  std::filesystem::create_directories(a.out);
  Calibration cal(a.calibration.empty() ? a.out + "/calibration.json" : a.calibration, layouts_measurer(),
                  fleet.calibration_entries, fleet.seed);
  const std::string layout = a.layout.empty() ? fleet.layout : a.layout;
  const TuneResult r = run_tune(fleet, cal, a.headroom, layout, a.reinvest, a.outage);

  std::fprintf(report, "fleet %s, headroom %.0f%%: largest capacity with p99 RSS <= budget x (1 - headroom)\n", fleet.name.c_str(),
              100 * a.headroom);
  std::fprintf(report, "%-14s %-6s %12s %12s %8s %8s %8s %7s %7s %11s %11s %9s  %s\n", "datacenter", "layout", "capacity",
              "tuned", "limitGB", "p99GB", "p99GB'", "hit", "hit'", "upstream", "upstream'", "freedGB", "note");
  const std::string csv = a.out + "/tune.csv";
  std::ofstream out(csv);
  out << "datacenter,layout,current_capacity,tuned_capacity,budget_gb,limit_gb,p99_rss_current_gb,p99_rss_tuned_gb,"
         "hit_rate_current,hit_rate_tuned,upstream_qps_current,upstream_qps_tuned,memory_freed_gb,note\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& t : r.rows) {
    std::fprintf(report, "%-14s %-6s %12llu %12llu %8.2f %8.2f %8.2f %7.4f %7.4f %11.0f %11.0f %+9.2f  %s\n", t.datacenter.c_str(),
                t.layout.c_str(), static_cast<unsigned long long>(t.current_capacity),
                static_cast<unsigned long long>(t.tuned_capacity), t.limit_gb, t.p99_rss_current_gb, t.p99_rss_tuned_gb,
                t.hit_rate_current, t.hit_rate_tuned, t.upstream_qps_current, t.upstream_qps_tuned, t.memory_freed_gb,
                t.note.c_str());
    out << t.datacenter << ',' << t.layout << ',' << t.current_capacity << ',' << t.tuned_capacity << ',' << t.budget_gb
        << ',' << t.limit_gb << ',' << t.p99_rss_current_gb << ',' << t.p99_rss_tuned_gb << ',' << t.hit_rate_current
        << ',' << t.hit_rate_tuned << ',' << t.upstream_qps_current << ',' << t.upstream_qps_tuned << ','
        << t.memory_freed_gb << ',' << t.note << '\n';
    rows.push_back({{"datacenter", t.datacenter}, {"layout", t.layout}, {"current_capacity", t.current_capacity},
                    {"tuned_capacity", t.tuned_capacity}, {"budget_gb", t.budget_gb}, {"limit_gb", t.limit_gb},
                    {"p99_rss_current_gb", t.p99_rss_current_gb}, {"p99_rss_tuned_gb", t.p99_rss_tuned_gb},
                    {"hit_rate_current", t.hit_rate_current}, {"hit_rate_tuned", t.hit_rate_tuned},
                    {"upstream_qps_current", t.upstream_qps_current}, {"upstream_qps_tuned", t.upstream_qps_tuned},
                    {"memory_freed_gb", t.memory_freed_gb}, {"note", t.note}});
    if (t.outage)
      rows.back()["outage_goal"] = {{"minutes", a.outage.minutes},      {"answered_target", a.outage.answered},
                                    {"answered_current", t.outage_answered_current},
                                    {"goal_capacity", t.outage_capacity}, {"answered_goal", t.outage_answered_goal},
                                    {"p99_rss_goal_gb", t.outage_p99_rss_gb}, {"fits_budget", t.outage_fits_budget},
                                    {"note", t.outage_note}};
  }
  std::fprintf(report, "(' = at the tuned capacity; hit rates request-weighted over instances; freed = p99 current - tuned)\n");
  if (a.outage.minutes > 0) {
    std::fprintf(report,
                 "\noutage goal: answer %.2f%% of the requests (fresh or stale) during a %u-minute upstream outage "
                 "(median-rate instance at its plateau)\n",
                 100 * a.outage.answered, a.outage.minutes);
    std::fprintf(report, "%-14s %12s %9s %12s %9s %8s %5s  %s\n", "datacenter", "capacity", "answered", "goal_cap",
                 "answered'", "p99GB'", "fits", "note");
    std::ofstream oc(a.out + "/tune_outage.csv");
    oc << "datacenter,current_capacity,answered_current,goal_capacity,answered_goal,p99_rss_goal_gb,fits_budget,note\n";
    for (const auto& t : r.rows) {
      if (!t.outage) continue;
      std::fprintf(report, "%-14s %12llu %9.4f %12llu %9.4f %8.2f %5s  %s\n", t.datacenter.c_str(),
                   static_cast<unsigned long long>(t.current_capacity), t.outage_answered_current,
                   static_cast<unsigned long long>(t.outage_capacity), t.outage_answered_goal, t.outage_p99_rss_gb,
                   t.outage_capacity == 0 ? "-" : t.outage_fits_budget ? "yes" : "no", t.outage_note.c_str());
      oc << t.datacenter << ',' << t.current_capacity << ',' << t.outage_answered_current << ',' << t.outage_capacity
         << ',' << t.outage_answered_goal << ',' << t.outage_p99_rss_gb << ',' << t.outage_fits_budget << ','
         << t.outage_note << '\n';
    }
    std::fprintf(report, "(goal_cap: smallest capacity meeting the goal, 0 = not reachable within 8x; ' = at goal_cap; "
                 "fits: its p99 RSS within the budget minus headroom; wrote %s/tune_outage.csv)\n", a.out.c_str());
  }
  const std::string curve_csv = a.out + "/tune_hit_rate.csv";
  std::ofstream cc(curve_csv);
  cc << "datacenter,capacity,hit_rate,upstream_qps_median_instance\n";
  std::vector<std::string> names;
  for (const auto& p : r.curve) {
    cc << p.datacenter << ',' << p.capacity << ',' << p.hit_rate << ',' << p.upstream_qps << '\n';
    if (std::find(names.begin(), names.end(), p.datacenter) == names.end()) names.push_back(p.datacenter);
  }
  cc.close();
  std::string why;
  const std::string png = a.out + "/tune_hit_rate.png";
  const bool charted = tune_chart(curve_csv, names, png, &why);
  std::fprintf(report, "wrote %s, %s%s (%.1f s)\n", csv.c_str(), curve_csv.c_str(), charted ? (", " + png).c_str() : "",
              r.elapsed_s);
  if (!charted) std::fprintf(report, "chart: %s\n", why.c_str());
  if (a.json) std::cout << rows.dump() << std::endl;
}

}  // namespace

void add_tune_command(CLI::App& sim) {
  auto [c, args] = add_command<TuneArgs>(
      sim, "tune",
      "Per datacenter: the largest cache capacity whose p99 RSS stays within the memory budget minus\n"
      "headroom, with hit rate and upstream queries/s at the current and tuned capacity; also the\n"
      "'reinvest' case with another layout. Writes DIR/tune.csv, DIR/tune_hit_rate.csv and a chart.\n"
      "Outage goal: --outage-minutes 30 --outage-answered 0.99 also finds, per datacenter, the smallest\n"
      "capacity at which the median-rate instance answers 99% of the requests asked during a 30-minute\n"
      "upstream outage (fresh, or stale within the datacenter's stale.max_age_s), its p99 RSS and\n"
      "whether it fits the budget (table, DIR/tune_outage.csv, `outage_goal` in each --json row).\n"
      "Measured curves: --curves [DC=]FILE... (written by `dnsarena stats --mrc --json`, one per host) or\n"
      "--segment [DC=]NAME... (a live segment on this host) replace the profile's model: per datacenter the\n"
      "capacity whose whole segment fits the budget minus headroom, and the hit rate and upstream q/s read\n"
      "off the curves there (or 'beyond measured range').",
      [](const TuneArgs& a) { run_distributed(a.fleet, [&] { run(a); }); });  // mpirun: distributed_run.hpp
  add_fleet_run_options(*c, *args, "tune-out", "Print one JSON array of per-datacenter rows last");
  c->add_option("--headroom", args->headroom, "Share of the budget kept free")->check(CLI::Range(0.0, 0.9))->capture_default_str();
  c->add_option("--layout", args->layout, "Layout running now (default: the fleet file's 'layout')");
  c->add_option("--reinvest-layout", args->reinvest, "Layout after a change, for the reinvest case ('' to skip)")
      ->capture_default_str();
  c->add_option("--outage-minutes", args->outage.minutes,
                "Outage goal: length of the upstream outage to ride out, minutes (0 = no outage goal)")
      ->check(CLI::Range(0u, 7u * 1440u))
      ->capture_default_str();
  c->add_option("--outage-answered", args->outage.answered,
                "Outage goal: share of the requests during the outage to answer, fresh or stale")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  auto* curves = c->add_option("--curves", args->curves,
                               "Measured curves, [DC=]FILE per host (`dnsarena stats --mrc --json` output; the "
                               "datacenter from DC=, the file's \"datacenter\", or the fleet's only one)");
  auto* segments = c->add_option("--segment", args->segments,
                                 "Measured curve of a live segment on this host, [DC=]NAME (runs `dnsarena stats --mrc "
                                 "--json`)");
  // The profile model's options: refused beside measured curves rather than ignored.
  for (const char* model_only : {"--outage-minutes", "--outage-answered", "--layout", "--reinvest-layout", "--calibration"}) {
    c->get_option(model_only)->excludes(curves);
    c->get_option(model_only)->excludes(segments);
  }
}

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim rollout --fleet F --plan P [--curves [DC=]FILE...] [--out DIR] [--json]`
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "access_limit.hpp"
#include "calibration.hpp"
#include "chart.hpp"
#include "distributed_run.hpp"
#include "fleet_commands.hpp"
#include "rollout_sim.hpp"
#include "fleet_config.hpp"
#include "sim/command_options.hpp"

namespace dnsarena::sim::fleet {

namespace {

struct RolloutArgs : FleetRunOptions {
  std::string plan;
  std::string versus;  // another run's rollout.csv, drawn dashed on the chart
  std::vector<std::string> curves;  // [DC=]FILE: measured hit rates (measured_rollout.hpp)
};

std::string time_of(const RolloutResult& r, std::int64_t minute) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "T%02d:%02d", static_cast<int>(minute % 1440) / 60, static_cast<int>(minute % 60));
  return format_date_days(r.sim_start_day + minute / 1440) + buf;
}

void run(const RolloutArgs& a) {
  // With --json, stdout carries the one JSON document alone; the human report goes to stderr.
  FILE* const report = a.json ? stderr : stdout;
  const auto t0 = std::chrono::steady_clock::now();
  const FleetConfig fleet = load_fleet(a.fleet);
  const RolloutPlan plan = load_plan(a.plan, fleet);
  const MeasuredPlateaus measured =
      a.curves.empty() ? MeasuredPlateaus() : MeasuredPlateaus(fleet, group_by_datacenter(load_curve_specs(a.curves), fleet));
  std::filesystem::create_directories(a.out);
  const std::string cal_path = a.calibration.empty() ? a.out + "/calibration.json" : a.calibration;
  Calibration cal(cal_path, layouts_measurer(), fleet.calibration_entries, fleet.seed);
  const RolloutResult r = run_rollout(fleet, plan, cal, measured);
  const std::string csv = a.out + "/rollout.csv";
  write_rollout_csv(r, csv);
  std::string why;
  const std::string png = a.out + "/rollout.png";
  const bool charted = rollout_chart(csv, png, time_of(r, r.rollout_start_minute), time_of(r, r.rollout_end_minute),
                                     "RSS per instance, fleet '" + fleet.name + "': " + plan.from + " -> " + plan.to +
                                         (plan.warm_upgrade ? ", warm upgrade" : ", cold upgrade"),
                                     &why, a.versus,
                                     std::filesystem::path(a.versus).parent_path().filename().string());
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::fprintf(report, "fleet %s: %llu instances, %zu steps of %u min, %s -> %s, rollout %s .. %s\n", fleet.name.c_str(),
              static_cast<unsigned long long>(r.instances), r.steps.size(), r.step_minutes, plan.from.c_str(),
              plan.to.c_str(), format_date_days(plan.start_day).c_str(), format_date_days(plan.end_day).c_str());
  std::fprintf(report, "\nper datacenter (median-rate instance, plateau): real cache (SHARDS) vs Che's approximation\n");
  std::fprintf(report, "%-14s %12s %9s %12s %12s %8s %8s %7s %9s %9s %8s %8s\n", "datacenter", "capacity", "R", "entries",
              "che_entries", "hit", "che_hit", "d_pts", "B/e_from", "B/e_to", "rss/al_f", "rss/al_t");
  for (const auto& c : r.checks)
    std::fprintf(report, "%-14s %12llu %9.2e %12.0f %12.0f %8.4f %8.4f %+7.2f %9.1f %9.1f %8.3f %8.3f%s\n", c.datacenter.c_str(),
                static_cast<unsigned long long>(c.capacity), c.sample_rate, c.cache_entries, c.che_entries,
                c.cache_hit_rate, c.che_hit_rate, 100 * (c.cache_hit_rate - c.che_hit_rate), c.bytes_before,
                c.bytes_after, c.resident_ratio_before, c.resident_ratio_after,
                c.cache_reached_plateau ? "" : "  (no plateau within curve_max_days)");
  std::fprintf(report, "(B/e: resident bytes per entry; rss/al: heap layouts' resident / allocated after churn under jemalloc)\n");
  for (const auto& c : r.checks)
    if (c.measured_hit_rate)
      std::fprintf(report, "%s: hit rates from measured curves: plateau %.4f at capacity %llu (the model's %.4f scaled to it)\n",
                   c.datacenter.c_str(), *c.measured_hit_rate, static_cast<unsigned long long>(c.capacity),
                   c.cache_hit_rate);
  std::fprintf(report, "\nRSS plateaus (GB): before = mean before the rollout start; after = mean over the last 7 days\n");
  std::fprintf(report, "%-5s %9s %9s %8s\n", "", "before", "after", "change");
  auto row = [report](const char* n, double b, double af) { std::fprintf(report, "%-5s %9.2f %9.2f %+7.1f%%\n", n, b, af, 100 * (af / b - 1)); };
  row("p50", r.p50_before, r.p50_after);
  row("p90", r.p90_before, r.p90_after);
  row("p98", r.p98_before, r.p98_after);
  row("p99", r.p99_before, r.p99_after);
  auto published = [report](const char* n, double predicted, double pub) {
    if (pub > 0) std::fprintf(report, "%s after: predicted %.2f GB, published %.2f GB, error %+.1f%%\n", n, predicted, pub, 100 * (predicted / pub - 1));
  };
  published("p90", r.p90_after, plan.published_p90_after_gb);
  published("p99", r.p99_after, plan.published_p99_after_gb);
  const ProcessMemoryFit& fit = r.fit;
  if (fit.fitted) {
    std::fprintf(report,
                 "\nprocess memory fitted to the published before-state (p90 %.2f, p99 %.2f GB): outside the cache %.3f GB "
                 "(the fleet file assumes %.2f), cache bytes x %.4f\n",
                 plan.published_p90_before_gb, plan.published_p99_before_gb, fit.process_gb, fit.assumed_process_gb,
                 fit.cache_scale);
    std::fprintf(report, "after-state, out of sample: p90 %.2f GB", fit.p90_after_gb);
    if (plan.published_p90_after_gb > 0)
      std::fprintf(report, " (published %.2f, error %+.1f%%)", plan.published_p90_after_gb,
                   100 * (fit.p90_after_gb / plan.published_p90_after_gb - 1));
    std::fprintf(report, ", p99 %.2f GB", fit.p99_after_gb);
    if (plan.published_p99_after_gb > 0)
      std::fprintf(report, " (published %.2f, error %+.1f%%)", plan.published_p99_after_gb,
                   100 * (fit.p99_after_gb / plan.published_p99_after_gb - 1));
    std::fprintf(report, "\n");
    if (fit.after_fitted)
      std::fprintf(report, "(the after-state alone would need %.3f GB outside the cache and cache bytes x %.4f)\n",
                   fit.after_process_gb, fit.after_cache_scale);
  } else if (plan.published_p90_before_gb > 0) {
    std::fprintf(report, "process memory not fitted: %s\n", fit.why_not.c_str());
  }
  if (!r.outages.empty()) {
    std::fprintf(report, "\nupstream outages: share of the datacenter's requests answered fresh, stale, failed (SERVFAIL)\n");
    std::fprintf(report, "%-14s %-17s %7s %9s %14s %8s %8s %8s\n", "datacenter", "at", "minutes", "stale_max", "requests",
                 "fresh", "stale", "failed");
    for (const OutageReport& o : r.outages)
      std::fprintf(report, "%-14s %-17s %7u %8us %14.0f %8.4f %8.4f %8.4f\n", o.datacenter.c_str(),
                   time_of(r, o.minute).c_str(), o.minutes, o.stale_max_age_s, o.requests, o.fresh_share,
                   o.stale_share, o.failed_share);
    std::fprintf(report, "all outages: %.4f answered stale, %.4f failed\n", r.outage_stale_share, r.outage_failed_share);
  }
  std::fprintf(report, "upgrade restarts: %s; peak upstream during the rollout %.0f q/s\n", plan.warm_upgrade ? "warm" : "cold",
              r.peak_upstream_qps);
  std::fprintf(report, "\ncalibration %s: %zu profiles measured, %zu reused\n", cal.path().c_str(), cal.measured(), cal.reused());
  const double cache_rate = r.cache_seconds > 0 ? r.sampled_requests / r.cache_seconds : 0;
  std::fprintf(report, "timing: %zu curves from the real cache (%llu sampled requests, requests_per_s_per_core %.2f M) %.2f s; "
              "fleet steps %.2f s (%.1f CPU s in this process); total %.2f s\n",
              r.curves, static_cast<unsigned long long>(r.sampled_requests), cache_rate / 1e6, r.curves_s, r.fleet_s,
              r.fleet_cpu_s, elapsed);
  // The machine's limit for the curves' memory pattern, measured now (access_limit.hpp).
  constexpr double kTargetRate = 5e6;  // the target of requests_per_s_per_core
  const RequestRateLimit limit =
      request_rate_limit(r.memory_accesses, static_cast<double>(r.sampled_requests), r.segment_bytes, fleet.seed);
  const char* verdict = cache_rate >= kTargetRate ? "met"
                        : limit.requests_per_s < kTargetRate ? "not met: above this machine's memory limit"
                                                             : "not met: below the memory limit (CPU work per request binds)";
  std::fprintf(report, "limit: %.2f random accesses/request x %.2f ns/access (%s chains, thread CPU time, over %.1f MB with THP; "
              "one chain %.1f ns) = %.2f M requests/s per core; measured %.2f M (%.0f%% of the limit); 5 M target %s\n",
              limit.accesses_per_request, limit.access.independent_ns, "8/16 independent", limit.access.bytes / 1e6,
              limit.access.dependent_ns, limit.requests_per_s / 1e6, cache_rate / 1e6,
              limit.requests_per_s > 0 ? 100 * cache_rate / limit.requests_per_s : 0.0, verdict);
  std::fprintf(report, "wrote %s%s\n", csv.c_str(), charted ? (" and " + png).c_str() : "");
  if (!charted) std::fprintf(report, "chart: %s\n", why.c_str());
  if (a.json) {
    nlohmann::json j = {{"p50_before_gb", r.p50_before}, {"p50_after_gb", r.p50_after},
                        {"p90_before_gb", r.p90_before}, {"p90_after_gb", r.p90_after},
                        {"p98_before_gb", r.p98_before}, {"p98_after_gb", r.p98_after},
                        {"p99_before_gb", r.p99_before}, {"p99_after_gb", r.p99_after},
                        {"instances", r.instances},      {"steps", r.steps.size()},
                        {"step_minutes", r.step_minutes}, {"elapsed_s", elapsed},
                        {"curves_s", r.curves_s},        {"fleet_s", r.fleet_s},
                        {"curves_cpu_s", r.curves_cpu_s}, {"fleet_cpu_s", r.fleet_cpu_s},
                        {"curves", r.curves},            {"sampled_requests", r.sampled_requests},
                        {"requests_per_s_per_core", cache_rate},
                        {"requests_per_s_limit", limit.requests_per_s},
                        {"requests_per_s_limit_from",
                         {{"accesses_per_request", limit.accesses_per_request},
                          {"ns_per_access", limit.access.independent_ns},
                          {"ns_per_dependent_access", limit.access.dependent_ns},
                          {"buffer_bytes", limit.access.bytes},
                          {"formula", "1e9 / (accesses_per_request x ns_per_access)"}}},
                        {"requests_per_s_target", kTargetRate},
                        {"requests_per_s_target_met", cache_rate >= kTargetRate},
                        {"requests_per_s_verdict", verdict},
                        {"upgrade", plan.warm_upgrade ? "warm" : "cold"},
                        {"peak_upstream_qps", r.peak_upstream_qps},
                        {"csv", csv},                    {"chart", charted ? png : ""}};
    if (plan.published_p90_after_gb > 0) j["published_p90_after_gb"] = plan.published_p90_after_gb;
    if (plan.published_p99_after_gb > 0) j["published_p99_after_gb"] = plan.published_p99_after_gb;
    if (fit.fitted) {
      j["process_memory_fit"] = {{"published_p90_before_gb", plan.published_p90_before_gb},
                                 {"published_p99_before_gb", plan.published_p99_before_gb},
                                 {"assumed_process_gb", fit.assumed_process_gb},
                                 {"process_gb", fit.process_gb},
                                 {"cache_scale", fit.cache_scale},
                                 {"p90_after_gb", fit.p90_after_gb},
                                 {"p99_after_gb", fit.p99_after_gb}};
      if (fit.after_fitted) {
        j["process_memory_fit"]["after_state_alone_process_gb"] = fit.after_process_gb;
        j["process_memory_fit"]["after_state_alone_cache_scale"] = fit.after_cache_scale;
      }
    } else if (plan.published_p90_before_gb > 0) {
      j["process_memory_fit"] = {{"fitted", false}, {"why_not", fit.why_not}};
    }
    if (!r.outages.empty()) {
      auto& outs = j["outages"] = nlohmann::json::array();
      for (const OutageReport& o : r.outages)
        outs.push_back({{"datacenter", o.datacenter}, {"at", time_of(r, o.minute)}, {"minutes", o.minutes},
                        {"stale_max_age_s", o.stale_max_age_s}, {"requests", o.requests},
                        {"fresh_share", o.fresh_share}, {"stale_share", o.stale_share},
                        {"failed_share", o.failed_share}});
      j["outage_stale_share"] = r.outage_stale_share;
      j["outage_failed_share"] = r.outage_failed_share;
    }
    auto& dcs = j["datacenters"] = nlohmann::json::array();
    for (const auto& c : r.checks)
      dcs.push_back({{"datacenter", c.datacenter}, {"capacity", c.capacity}, {"sample_rate", c.sample_rate},
                     {"cache_entries", c.cache_entries}, {"che_entries", c.che_entries},
                     {"cache_hit_rate", c.cache_hit_rate}, {"che_hit_rate", c.che_hit_rate},
                     {"hit_rate_diff_pts", 100 * (c.cache_hit_rate - c.che_hit_rate)},
                     {"bytes_per_entry_from", c.bytes_before}, {"bytes_per_entry_to", c.bytes_after},
                     {"resident_ratio_from", c.resident_ratio_before}, {"resident_ratio_to", c.resident_ratio_after},
                     {"ecs_entry_share", c.ecs_entry_share},
                     {"measured_hit_rate", c.measured_hit_rate ? nlohmann::json(*c.measured_hit_rate) : nlohmann::json(nullptr)}});
    std::cout << j.dump() << std::endl;
  }
}

}  // namespace

void add_rollout_command(CLI::App& sim) {
  auto [c, args] = add_command<RolloutArgs>(
      sim, "rollout",
      "Simulate fleet RSS (p50/p90/p98/p99 across instances) over time while a layout rolls out.\n"
      "Curves come from the real cache on a SHARDS-sampled trace; bytes per entry from the layouts\n"
      "calibration (cached in --calibration). Writes DIR/rollout.csv and DIR/rollout.png.\n"
      "A plan's `outages: [{datacenter, at, minutes}]` schedules upstream outages: the report, the CSV\n"
      "(stale_share, failed_share) and --json give the share of requests answered stale and failed\n"
      "(datacenters' `stale: {max_age_s}` and `prefetch: {percent}` as serve's). `published:\n"
      "{p90_before_gb, p99_before_gb}` fits the process memory outside the cache to the before-state\n"
      "and prints the after-state as an out-of-sample prediction.\n"
      "--curves [DC=]FILE... (`dnsarena stats --mrc --json`, one per host) sets those datacenters' hit rate\n"
      "against capacity from the live curves instead of the profile's model.",
      [](const RolloutArgs& a) { run_distributed(a.fleet, [&] { run(a); }); });  // mpirun: distributed_run.hpp
  add_fleet_run_options(*c, *args, "rollout-out");
  c->add_option("--plan", args->plan, "Rollout plan YAML (e.g. configs/rollout/seed.yaml)")->required()->check(CLI::ExistingFile);
  c->add_option("--versus", args->versus, "Another run's rollout.csv, drawn dashed on the chart (e.g. the cold upgrade)")
      ->check(CLI::ExistingFile);
  c->add_option("--curves", args->curves,
                "Measured curves, [DC=]FILE per host (`dnsarena stats --mrc --json` output): their datacenters' hit "
                "rates against capacity");
}

}  // namespace dnsarena::sim::fleet

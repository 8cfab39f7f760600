// SPDX-License-Identifier: GPL-3.0-or-later
#include "layouts_command.hpp"

#include <iostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include <cstdio>

#include "churn_measure.hpp"
#include "counting_allocator.hpp"
#include "layout_measure.hpp"
#include "layouts_report.hpp"
#include "sim/command_options.hpp"

namespace dnsarena::sim {

namespace {

struct LayoutsOptions {
  std::uint64_t entries = 1'000'000;
  std::uint64_t seed = 42;
  bool json = false;
  bool no_speed = false;
  bool churn = false;
  TrafficProfile profile = benchmark_mix();
};

void check_share(const char* flag, double v) {
  if (!(v >= 0.0 && v <= 1.0))
    throw std::invalid_argument(std::string(flag) + " must be between 0 and 1, got " + std::to_string(v));
}

// The heap layouts' resident memory after fill + churn (churn_measure.hpp).
void report_churn(const LayoutsOptions& o, nlohmann::json* json) {
  const std::vector<ChurnRow> rows = measure_churn(o.profile, o.entries, o.seed);
  if (json != nullptr) {
    nlohmann::json& j = (*json)["churn"] = nlohmann::json::array();
    for (const ChurnRow& r : rows)
      j.push_back({{"layout", r.layout}, {"live_entries", r.live_entries}, {"alloc_bytes", r.alloc_bytes},
                   {"active_bytes", r.active_bytes}, {"resident_bytes", r.resident_bytes},
                   {"resident_unpurged_bytes", r.resident_unpurged_bytes}, {"retained_bytes", r.retained_bytes},
                   {"resident_ratio", r.resident_ratio}, {"measured", r.measured}});
    return;
  }
  std::printf("\nafter fill to %llu entries + churn of 2 x that (expiry + random eviction), jemalloc, per live entry%s\n",
              static_cast<unsigned long long>(o.entries), rows.empty() || rows[0].measured ? "" : " (NOT measured: no jemalloc)");
  std::printf("%-6s %10s %10s %10s %12s %10s %10s\n", "layout", "allocated", "active", "resident", "res_unpurged",
              "retained", "res/alloc");
  for (const ChurnRow& r : rows)
    std::printf("%-6s %10.1f %10.1f %10.1f %12.1f %10.1f %10.3f\n", r.layout.c_str(), r.alloc_bytes, r.active_bytes,
                r.resident_bytes, r.resident_unpurged_bytes, r.retained_bytes, r.resident_ratio);
}

void run_layouts(const LayoutsOptions& o) {
  if (o.entries == 0) throw std::invalid_argument("--entries must be at least 1");
  check_share("--ecs-share", o.profile.ecs_share);
  check_share("--negative-share", o.profile.negative_share);
  check_share("--cname-share", o.profile.cname_share);
  if (o.profile.negative_share + o.profile.cname_share > 1.0)
    throw std::invalid_argument("--negative-share + --cname-share must not exceed 1");
  std::vector<std::uint64_t> live;
  const std::vector<LayoutRow> rows = measure_layouts_with_live(o.profile, o.entries, o.seed, !o.no_speed, &live);
  if (o.json) {
    nlohmann::json j = {{"entries", o.entries}, {"seed", o.seed}, {"layouts", layouts::rows_json(rows)}};
    if (o.churn) report_churn(o, &j);
    std::cout << j.dump(2) << "\n";
    return;
  }
  layouts::ReportContext ctx;
  ctx.entries = o.entries;
  ctx.seed = o.seed;
  ctx.profile = o.profile;
  ctx.speed = !o.no_speed;
  ctx.alloc_estimate = layouts::allocated_bytes_is_estimate();
  ctx.live_entries = live;
  layouts::print_table(std::cout, rows, ctx);
  if (o.churn) report_churn(o, nullptr);
}

}  // namespace

void add_layouts_command(CLI::App& sim) {
  auto [cmd, opts] = add_command<LayoutsOptions>(
      sim, "layouts",
      "Reproduce the published fleet's five entry-layout changes (v0..v5) and measure dnsarena's arena beside them:\n"
      "bytes, allocated bytes and allocations per entry (counting allocator), insert throughput and\n"
      "lookup latency (find + build the DNS response), same keys and seed for every layout.",
      run_layouts);
  cmd->add_option("--entries", opts->entries, "Entries per layout")->capture_default_str();
  add_seed_option(*cmd, opts->seed, "Seed of the entry generator and of the lookup order");
  cmd->add_option("--ecs-share", opts->profile.ecs_share, "Share of entries keyed by an ECS client subnet (0..1)")
      ->capture_default_str();
  cmd->add_option("--negative-share", opts->profile.negative_share, "Share of NXDOMAIN/NODATA answers (0..1)")
      ->capture_default_str();
  cmd->add_option("--cname-share", opts->profile.cname_share, "Share of answers behind a CNAME (0..1)")
      ->capture_default_str();
  cmd->add_flag("--no-speed", opts->no_speed, "Measure bytes only (skip insert and lookup timing)");
  cmd->add_flag("--churn", opts->churn,
                "Also fill each heap layout to --entries, churn it (expiry + eviction) under jemalloc and print\n"
                "resident / active / retained bytes per entry and resident / allocated (what `sim rollout` charges)");
  add_json_flag(*cmd, opts->json,
                "Print one JSON object instead of the table: {entries, seed, layouts: [{layout, net_bytes,\n"
                "alloc_bytes, allocs, insert_per_s, lookup_ns_p50}], churn: [...] with --churn}");
}

}  // namespace dnsarena::sim

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena bench`: CLI, table and JSON for the cache benchmark (cache_bench.hpp).
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache_bench.hpp"
#include "common/bench_target.hpp"
#include "common/proc_stats.hpp"
#include "bench/commands.hpp"

namespace dnsarena::bench {

namespace {

using Target = common::BenchTarget;

std::vector<Target> targets_of(const CacheBenchResult& r) {
  const double base_ratio = r.baseline.measured && r.bytes_per_entry > 0 ? r.baseline.bytes_per_entry / r.bytes_per_entry : 0;
  std::vector<Target> t = {
      {"bytes_per_entry", r.bytes_per_entry, "<= 160", r.bytes_per_entry <= 160},
      {"insert_per_s", r.insert_per_s, ">= 3,000,000", r.insert_per_s >= 3e6},
      {"evict_insert_per_s", r.evict_insert_per_s, ">= 2,000,000", r.evict_insert_per_s >= 2e6},
      {"lookup_ns_p50 / dram_ns", r.lookup_ns_p50 / r.dram_ns, "<= 2.5", r.lookup_ns_p50 <= 2.5 * r.dram_ns},
      {"lookup_batched_ns / mlp_ns", r.lookup_batched_ns / r.mlp_ns, "<= 2.5", r.lookup_batched_ns <= 2.5 * r.mlp_ns},
      {"lookup_zipf_ns_p50", r.lookup_zipf_ns_p50, "<= 150", r.lookup_zipf_ns_p50 <= 150},
      {"lookup_zipf_hot_ns_p50", r.lookup_zipf_hot_ns_p50, "<= 150", r.lookup_zipf_hot_ns_p50 <= 150},
      {"lookup_2proc_speedup", r.lookup_2proc_speedup, ">= 1.8", r.lookup_2proc_speedup >= 1.8},
  };
  if (r.baseline.measured) t.push_back({"baseline / arena bytes", base_ratio, ">= 4", base_ratio >= 4});
  return t;
}

nlohmann::json to_json(const CacheBenchOptions& o, const CacheBenchResult& r) {
  nlohmann::json j{{"entries", r.entries},
                   {"requested_entries", r.requested_entries},
                   {"seed", o.seed},
                   {"bytes_per_entry", r.bytes_per_entry},
                   {"segment_bytes_per_entry", r.segment_bytes_per_entry},
                   {"rss_per_entry", r.rss_per_entry},
                   {"insert_per_s", r.insert_per_s},
                   {"evict_insert_per_s", r.evict_insert_per_s},
                   {"lookup_ns_p50", r.lookup_ns_p50},
                   {"lookup_ns_p99", r.lookup_ns_p99},
                   {"lookup_batched_ns", r.lookup_batched_ns},
                   {"lookup_batched_hot_ns", r.lookup_batched_hot_ns},
                   {"lookup_batched_hot_over_mlp", r.lookup_batched_hot_ns / r.mlp_ns},
                   {"lookup_batched_memory_ns", r.lookup_batched_memory_ns},
                   {"lookup_batched_memory_over_mlp", r.lookup_batched_memory_ns / r.mlp_ns},
                   {"lookup_batched_lines", r.lookup_batched_lines},
                   {"lookup_zipf_ns_p50", r.lookup_zipf_ns_p50},
                   {"lookup_zipf_hot_ns_p50", r.lookup_zipf_hot_ns_p50},
                   {"zipf_hot_entries", r.zipf_hot_entries},
                   {"dram_ns", r.dram_ns},
                   {"lookup_over_dram", r.lookup_ns_p50 / r.dram_ns},
                   {"mlp_ns", r.mlp_ns},
                   {"mlp8_ns", r.mlp8_ns},
                   {"mlp16_ns", r.mlp16_ns},
                   {"lookup_batched_over_mlp", r.lookup_batched_ns / r.mlp_ns},
                   {"lookup_2proc_speedup", r.lookup_2proc_speedup},
                   {"lookups_per_s_1proc", r.lookups_per_s_1proc},
                   {"lookups_per_s_2proc", r.lookups_per_s_2proc},
                   {"hit_ratio", r.hit_ratio},
                   {"evictions", r.evictions},
                   {"second_chances", r.second_chances},
                   {"conflict_evictions", r.conflict_evictions},
                   {"segment_bytes", r.segment_bytes},
                   {"segment_huge_page_share", r.segment_huge_page_share}};
  if (r.baseline.measured)
    j["baseline"] = {{"bytes_per_entry", r.baseline.bytes_per_entry},
                     {"bytes_from_allocator", r.baseline.bytes_from_allocator},
                     {"insert_per_s", r.baseline.insert_per_s},
                     {"lookup_ns_p50", r.baseline.lookup_ns_p50}};
  else
    j["baseline"] = nullptr;
  nlohmann::json targets = nlohmann::json::object();
  for (const Target& t : targets_of(r)) targets[t.metric] = {{"value", t.value}, {"target", t.rule}, {"met", t.met}};
  j["targets"] = targets;
  return j;
}

void print_table(const CacheBenchOptions& o, const CacheBenchResult& r) {
  std::printf("dnsarena bench: %llu entries (seed %llu), seed mix 56%% A / 25%% AAAA / 19%% TXT\n\n",
              static_cast<unsigned long long>(r.entries), static_cast<unsigned long long>(o.seed));
  std::printf("%-26s %14s %14s %10s\n", "metric", "dnsarena", "naive heap", "ratio");
  auto row = [&](const char* m, double a, double b, const char* fmt) {
    char va[32], vb[32], ratio[32] = "";
    std::snprintf(va, sizeof va, fmt, a);
    if (r.baseline.measured && b > 0) {
      std::snprintf(vb, sizeof vb, fmt, b);
      std::snprintf(ratio, sizeof ratio, "%.2fx", b / a);
    } else {
      std::snprintf(vb, sizeof vb, "-");
    }
    std::printf("%-26s %14s %14s %10s\n", m, va, vb, ratio);
  };
  row("bytes/entry", r.bytes_per_entry, r.baseline.bytes_per_entry, "%.1f");
  row("RSS/entry", r.rss_per_entry, 0, "%.1f");
  row("segment bytes/entry", r.segment_bytes_per_entry, 0, "%.1f");
  row("inserts/s", r.insert_per_s, r.baseline.insert_per_s, "%.0f");
  row("evicting inserts/s", r.evict_insert_per_s, 0, "%.0f");
  row("lookup ns p50", r.lookup_ns_p50, r.baseline.lookup_ns_p50, "%.0f");
  row("lookup ns p99", r.lookup_ns_p99, 0, "%.0f");
  row("lookup ns batched", r.lookup_batched_ns, 0, "%.1f");
  row("lookup ns batched, hot", r.lookup_batched_hot_ns, 0, "%.1f");
  row("lookup ns batched, loads", r.lookup_batched_memory_ns, 0, "%.1f");
  row("lookup ns zipf p50", r.lookup_zipf_ns_p50, 0, "%.0f");
  row("lookup ns zipf hot p50", r.lookup_zipf_hot_ns_p50, 0, "%.0f");
  row("DRAM ns (pointer chase)", r.dram_ns, 0, "%.1f");
  row("MLP ns, 8 chains", r.mlp8_ns, 0, "%.1f");
  row("MLP ns, 16 chains", r.mlp16_ns, 0, "%.1f");
  row("lookups/s 1 process", r.lookups_per_s_1proc, 0, "%.0f");
  row("lookups/s 2 processes", r.lookups_per_s_2proc, 0, "%.0f");
  std::printf("\n(ratio: naive / dnsarena; insert and lookup ratios below 1 mean dnsarena is faster)\n");
  std::printf("zipf hot: Zipf(0.9) over the %llu hottest entries only (a hot set that fits in L2 and the TLB);\n"
              "batched, hot: the batched rounds over %llu in-cache entries, the compute per hit (%.1fx mlp_ns:\n"
              "the floor of batched / mlp_ns that prefetching cannot lower);\n"
              "batched, loads: the batched rounds' %.2f lines per hit (2 buckets + the entry) loaded in their\n"
              "stages with their prefetches and no other work (%.1fx mlp_ns: the memory floor; batched >= the\n"
              "larger of hot and loads)\n",
              static_cast<unsigned long long>(r.zipf_hot_entries), static_cast<unsigned long long>(r.zipf_hot_entries),
              r.lookup_batched_hot_ns / r.mlp_ns, r.lookup_batched_lines, r.lookup_batched_memory_ns / r.mlp_ns);
  const std::string no_huge = r.segment_huge_page_share < 0.5 ? common::shm_huge_pages_unavailable() : "";
  std::printf("segment pages: %.0f%% of it on 2 MiB pages (DRAM and MLP chases on the same page size)%s%s\n",
              100 * r.segment_huge_page_share, no_huge.empty() ? "" : "; 4 KiB because ", no_huge.c_str());
  std::printf("hit ratio %.4f, evictions %llu, second chances %llu, bucket-conflict evictions %llu\n\n", r.hit_ratio,
              static_cast<unsigned long long>(r.evictions), static_cast<unsigned long long>(r.second_chances),
              static_cast<unsigned long long>(r.conflict_evictions));
  std::printf("%-26s %12s %14s %6s\n", "target", "value", "rule", "met");
  for (const Target& t : targets_of(r)) std::printf("%-26s %12.2f %14s %6s\n", t.metric, t.value, t.rule, t.met ? "yes" : "NO");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<CacheBenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("bench", "Cache benchmark: dnsarena vs a naive heap cache in one run (seed's mix)");
  cmd->add_option("--entries", opts->entries, "Entries to fill (the cache's capacity)")->capture_default_str()->check(CLI::Range(1000ULL, 2'000'000'000ULL));
  cmd->add_option("--seed", opts->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--lookups", opts->lookups, "Timed lookups per lookup phase")->capture_default_str()->check(CLI::Range(1000ULL, 1'000'000'000ULL));
  cmd->add_option("--evict-inserts", opts->evict_inserts, "Fresh inserts into the full cache")->capture_default_str()->check(CLI::Range(1000ULL, 1'000'000'000ULL));
  cmd->add_option("--region-bytes", opts->region_bytes, "Arena region size")->capture_default_str();
  cmd->add_flag("!--no-baseline", opts->baseline, "Skip the naive heap cache");
  cmd->add_flag("--json", *json, "Print one JSON object (progress goes to stderr)");
  cmd->callback([opts, json] {
    const CacheBenchResult r = run_cache_bench(*opts, std::cerr);
    if (*json) std::cout << to_json(*opts, r).dump(2) << "\n";
    else print_table(*opts, r);
  });
}

}  // namespace dnsarena::bench

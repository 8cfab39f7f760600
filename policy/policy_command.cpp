// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena policy bench`, `check` and `export`: CLI, table and JSON.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/bench_target.hpp"
#include "common/command_table.hpp"
#include "policy/commands.hpp"
#include "policy/policy_bench.hpp"
#include "policy/policy_config.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/rpz_copy_text.hpp"

namespace dnsarena::policy {

namespace {

using Target = common::BenchTarget;

std::vector<Target> targets_of(const PolicyBenchResult& r) {
  std::vector<Target> t = {{"compile_s (parse + image)", r.total_s, "<= 2 (1M rules)", r.total_s <= 2.0 * static_cast<double>(r.rules) / 1e6},
          {"bytes_per_rule", r.bytes_per_rule, "<= 64", r.bytes_per_rule <= 64},
          {"no_match_ns", r.no_match_ns, "<= 50", r.no_match_ns <= 50},
          {"correct (no false match)", static_cast<double>(r.no_match_found + r.match_missed), "== 0",
           r.no_match_found + r.match_missed == 0}};
  // Judged only against a hit's measured user-space time (--hit-ns).
  if (r.chain_plain_share > 0)
    t.push_back({"chain_plain % of a hit", 100 * r.chain_plain_share, "<= 5", r.chain_plain_share <= 0.05});
  return t;
}

nlohmann::json to_json(const PolicyBenchOptions& o, const PolicyBenchResult& r) {
  nlohmann::json targets = nlohmann::json::object();
  for (const Target& t : targets_of(r)) targets[t.metric] = {{"value", t.value}, {"rule", t.rule}, {"met", t.met}};
  return {{"rules", r.rules},           {"seed", o.seed},
          {"lookups", o.lookups},       {"zone_file_bytes", r.zone_file_bytes},
          {"parse_s", r.parse_s},       {"compile_s", r.compile_s},
          {"total_s", r.total_s},       {"image_bytes", r.image_bytes},
          {"bytes_per_rule", r.bytes_per_rule}, {"no_match_ns", r.no_match_ns},
          {"no_match_hot_ns", r.no_match_hot_ns}, {"match_ns", r.match_ns},
          {"chain_plain_ns", r.chain_plain_ns}, {"chain_cname_ns", r.chain_cname_ns},
          {"hit_ns", o.hit_ns}, {"chain_plain_share", r.chain_plain_share},
          {"no_match_found", r.no_match_found}, {"match_missed", r.match_missed},
          {"targets", targets}};
}

void print_table(const PolicyBenchOptions& o, const PolicyBenchResult& r) {
  std::printf("dnsarena policy bench: %zu rules (seed %llu), %zu lookups per phase\n\n", r.rules,
              static_cast<unsigned long long>(o.seed), o.lookups);
  std::printf("%-28s %14s\n", "metric", "value");
  std::printf("%-28s %14.3f\n", "parse s (zone file)", r.parse_s);
  std::printf("%-28s %14.3f\n", "compile s (image)", r.compile_s);
  std::printf("%-28s %14.3f\n", "parse + compile s", r.total_s);
  std::printf("%-28s %14zu\n", "image bytes", r.image_bytes);
  std::printf("%-28s %14.1f\n", "bytes per rule", r.bytes_per_rule);
  std::printf("%-28s %14.1f\n", "no-match ns (distinct names)", r.no_match_ns);
  std::printf("%-28s %14.1f\n", "no-match ns (1,000 hot)", r.no_match_hot_ns);
  std::printf("%-28s %14.1f\n", "match ns", r.match_ns);
  std::printf("%-28s %14.1f\n", "chain check ns (no CNAME)", r.chain_plain_ns);
  std::printf("%-28s %14.1f\n", "chain check ns (1 CNAME)", r.chain_cname_ns);
  std::printf("\n%-28s %12s %16s %6s\n", "target", "value", "rule", "met");
  for (const Target& t : targets_of(r)) std::printf("%-28s %12.2f %16s %6s\n", t.metric, t.value, t.rule, t.met ? "yes" : "NO");
}

void add_bench(CLI::App& group) {
  auto opts = std::make_shared<PolicyBenchOptions>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand("bench", "Compile a generated RPZ zone and time lookups in it");
  cmd->add_option("--rules", opts->rules, "Triggers in the generated zone")->capture_default_str()->check(CLI::Range(100ULL, 50'000'000ULL));
  cmd->add_option("--lookups", opts->lookups, "Timed lookups per phase")->capture_default_str()->check(CLI::Range(1000ULL, 1'000'000'000ULL));
  cmd->add_option("--seed", opts->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--dir", opts->dir, "Directory for the generated zone file")->capture_default_str();
  cmd->add_option("--hit-ns", opts->hit_ns,
                  "A hit's user-space ns per query (bench serve's user_ns_per_query): the chain check's share of it");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([opts, json] {
    const PolicyBenchResult r = run_policy_bench(*opts);
    if (*json) std::cout << to_json(*opts, r).dump(2) << "\n";
    else print_table(*opts, r);
    if (r.no_match_found + r.match_missed != 0) throw CLI::RuntimeError(1);  // a wrong answer is a failure
  });
}

void add_check(CLI::App& group) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = group.add_subcommand("check", "Read RPZ files (zone files or transferred copies) as serve would: rules per zone, or the first error as FILE:LINE");
  cmd->add_option("files", *files, "RPZ zone files (origin: each file's SOA owner)")->required();
  cmd->callback([files] {
    PolicyConfig cfg;
    // A transferred copy as serve reads it: with the delta beside it, if one is made for it.
    for (const std::string& f : *files) cfg.rpz.push_back({f, "", RpzCopyReader::is_copy(f)});
    try {
      const CompiledPolicy c = compile_policy_config(cfg);
      for (const ZoneReport& z : c.zones)
        std::printf("%s (%s): %zu rules from %zu records, %zu unsupported skipped, %zu shadowed\n", z.name.c_str(),
                    z.source.c_str(), z.rules, z.records, z.unsupported, z.shadowed);
      std::printf("image: %zu rules, %zu bytes\n", c.rules, c.image.size());
    } catch (const PolicyError& e) {
      std::fprintf(stderr, "dnsarena policy check: %s\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

void add_export(CLI::App& group) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("export", "Print the copy of an RPZ a zone transfer keeps (policy.rpz file:) as a zone file");
  cmd->add_option("file", *file, "The copy (written by serve after each transfer)")->required();
  cmd->callback([file] {
    try {
      RpzCopyReader copy(*file);
      print_rpz_copy(copy, stdout);
      if (std::fflush(stdout) != 0) throw PolicyError("cannot write the zone text");
    } catch (const PolicyError& e) {
      std::fprintf(stderr, "dnsarena policy export: %s\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace

void add_policy_command(CLI::App& app) {
  CLI::App* group = common::add_command_group(app, "policy", "Response policy zones: check files, export a transferred copy, benchmark");
  add_bench(group[0]);
  add_check(group[0]);
  add_export(group[0]);
}

}  // namespace dnsarena::policy

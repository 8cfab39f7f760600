// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench torture`: CLI, table and JSON for the kill -9 torture (torture.hpp).
// Exit status 1 when any read was wrong, a check failed, a child stalled or failed.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/lab/commands.hpp"
#include "common/add_command.hpp"
#include "bench/lab/torture.hpp"

namespace dnsarena::bench {

namespace {

nlohmann::json to_json(const TortureOptions& o, const TortureResult& r) {
  return {{"rounds", r.rounds},
          {"readers", o.readers},
          {"writers", o.writers},
          {"keys", o.keys},
          {"regions", o.regions},
          {"check_every", o.check_every},
          {"seed", o.seed},
          {"writers_killed", r.writers_killed},
          {"readers_killed", r.readers_killed},
          {"children_failed", r.children_failed},
          {"repairs", r.repairs},
          {"reads", r.reads},
          {"hits", r.hits},
          {"wrong_reads", r.wrong_reads},
          {"writes", r.writes},
          {"erases", r.erases},
          {"skipped_writes", r.skipped_writes},
          {"checks", r.checks},
          {"check_failures", r.check_failures},
          {"stalls", r.stalls},
          {"seconds", r.seconds},
          {"first_wrong_read", r.first_wrong_read},
          {"first_check_problem", r.first_check_problem},
          {"first_stall", r.first_stall},
          {"ok", r.ok()}};
}

void print_table(const TortureOptions& o, const TortureResult& r) {
  std::printf("dnsarena-lab bench torture: %llu rounds of kill -9, %u writers + %u readers on one segment "
              "(%u keys, %u x 4 KiB regions), check every %llu rounds, seed %llu\n\n",
              static_cast<unsigned long long>(r.rounds), o.writers, o.readers, o.keys, o.regions,
              static_cast<unsigned long long>(o.check_every), static_cast<unsigned long long>(o.seed));
  auto row = [](const char* what, unsigned long long v, const char* want) {
    std::printf("%-34s %14llu   %s\n", what, v, want);
  };
  row("writers killed (SIGKILL)", r.writers_killed, "");
  row("readers killed (SIGKILL)", r.readers_killed, "");
  row("repairs (lock owner found dead)", r.repairs, "");
  row("reads", r.reads, "");
  row("hits verified byte for byte", r.hits, "");
  row("writes / erases", r.writes + r.erases, "");
  row("writes skipped (lock busy)", r.skipped_writes, "");
  row("checks", r.checks, "");
  row("torn or wrong reads", r.wrong_reads, "target 0");
  row("check failures", r.check_failures, "target 0");
  row("stalls (deadlocks)", r.stalls, "target 0");
  row("children that failed by themselves", r.children_failed, "target 0");
  std::printf("%-34s %14.1f\n", "seconds", r.seconds);
  if (!r.first_wrong_read.empty()) std::printf("first wrong read: %s\n", r.first_wrong_read.c_str());
  if (!r.first_check_problem.empty()) std::printf("first check problem: %s\n", r.first_check_problem.c_str());
  if (!r.first_stall.empty()) std::printf("first stall: %s\n", r.first_stall.c_str());
  std::printf("\n%s\n", r.ok() ? "PASS" : "FAIL");
}

struct TortureArgs {
  TortureOptions options;
  bool json = false;
};

void run_torture_command(const TortureArgs& a) {
  const TortureResult r = run_torture(a.options, std::cerr);
  if (a.json) std::cout << to_json(a.options, r).dump(2) << "\n";
  else print_table(a.options, r);
  std::cout.flush();
  if (!r.ok()) std::exit(1);
}

}  // namespace

void add_bench_torture_command(CLI::App& bench) {
  auto [cmd, args] = common::add_command<TortureArgs>(
      bench, "torture", "Random kill -9 of readers and writers sharing one segment; check every N rounds; byte-exact reads",
      run_torture_command);
  TortureOptions* opts = &args->options;
  cmd->add_option("--rounds", opts->rounds, "Kill rounds")->capture_default_str()->check(CLI::Range(1ULL, 100'000'000ULL));
  cmd->add_option("--readers", opts->readers, "Reader processes")->capture_default_str()->check(CLI::Range(0u, 32u));
  cmd->add_option("--writers", opts->writers, "Writer processes")->capture_default_str()->check(CLI::Range(1u, 32u));
  cmd->add_option("--keys", opts->keys, "Distinct keys (also the live-entry limit)")->capture_default_str()->check(CLI::Range(100u, 10'000'000u));
  cmd->add_option("--regions", opts->regions, "Arena regions of 4 KiB")->capture_default_str()->check(CLI::Range(4u, 100'000u));
  cmd->add_option("--check-every", opts->check_every, "Rounds between checks")->capture_default_str()->check(CLI::Range(1ULL, 1'000'000ULL));
  cmd->add_option("--seed", opts->seed, "Seed of the kill schedule and the children's keys")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object (progress goes to stderr)");
}

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench attack`: `dnsarena serve` on a hostile network, one row per judged
// figure with its target and whether it was met: the scenarios of attack_scenarios.hpp
// (tcp-pipeline, tcp-slow, flood, spoof, fill, cpu-per-hit) run one after the other,
// then a table, or with `--json` one object.
// --quick shrinks every figure so the whole run takes under a minute; `--check` makes the
// exit code 1 when a target that does not depend on timing is missed (forged records
// cached, RSS growth, descriptors), for the ctest.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/lab/attack_scenarios.hpp"
#include "bench/lab/commands.hpp"
#include "bench/lab/lab_interrupt.hpp"
#include "common/process_limits.hpp"
#include "common/sibling_program.hpp"

namespace dnsarena::bench {

namespace {

struct Scenario {
  const char* name;  // --only's argument
  std::vector<AttackRow> (*run)(const AttackContext&);
};
// In the order they run.
constexpr Scenario kAttackScenarios[] = {
    {"tcp-pipeline", run_tcp_pipeline_scenario}, {"tcp-slow", run_tcp_slow_scenario},
    {"flood", run_flood_scenario},               {"spoof", run_spoof_scenario},
    {"fill", run_fill_scenario},                 {"cpu-per-hit", run_cpu_per_hit_scenario},
};

// What a run produced: the rows of the scenarios that ran, and the error that stopped it.
struct AttackResult {
  std::vector<AttackRow> rows;
  std::string error;  // "<scenario>: <what>", or empty
  double seconds = 0;
};

void print_json(const AttackOptions& o, const AttackResult& res) {
  nlohmann::json j;
  j["quick"] = o.quick;
  j["seconds"] = res.seconds;
  j["interrupted"] = g_lab_interrupted.load();
  if (!res.error.empty()) j["error"] = res.error;
  j["rows"] = nlohmann::json::array();
  for (const AttackRow& r : res.rows)
    j["rows"].push_back({{"scenario", r.scenario}, {"figure", r.figure}, {"target", r.target},
                         {"met", r.met ? nlohmann::json(*r.met) : nlohmann::json(nullptr)}, {"detail", r.detail}});
  std::cout << j.dump() << "\n";
}

void print_table(const AttackOptions& o, const AttackResult& res, const std::string& dir) {
  std::printf("dnsarena-lab bench attack%s: %.0f s, serve with 2 workers on loopback (logs in %s)\n",
              o.quick ? " --quick" : "", res.seconds, dir.c_str());
  std::printf("%-13s %-5s %-34s %s\n", "scenario", "met", "target", "figure");
  for (const AttackRow& r : res.rows)
    std::printf("%-13s %-5s %-34s %s\n", r.scenario.c_str(), !r.met ? "-" : *r.met ? "yes" : "NO", r.target.c_str(),
                r.figure.c_str());
  if (!res.error.empty()) std::printf("stopped: %s\n", res.error.c_str());
  if (g_lab_interrupted) std::printf("interrupted: the remaining scenarios were skipped\n");
}

int run_attack(const AttackOptions& o) {
  install_lab_interrupt();
  common::raise_nofile_soft_limit(o.slow_clients + 1024);
  const AttackContext ctx{o, common::daemon_program(), "/tmp/dnsarena-bench-attack-" + std::to_string(::getpid()),
                          g_lab_interrupted};
  ::mkdir(ctx.dir.c_str(), 0700);
  AttackResult res;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Scenario& s : kAttackScenarios) {
    if (g_lab_interrupted || (!o.only.empty() && o.only != s.name)) continue;
    try {
      for (AttackRow& r : s.run(ctx)) res.rows.push_back(std::move(r));
    } catch (const std::exception& e) {
      res.error = std::string(s.name) + ": " + e.what();
      break;
    }
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool check_failed = false;
  for (const AttackRow& r : res.rows)
    if (r.timing_free && r.met == false) check_failed = true;
  if (o.json) print_json(o, res);
  else print_table(o, res, ctx.dir);
  if (!res.error.empty() || g_lab_interrupted) return 1;
  return o.check && check_failed ? 1 : 0;
}

}  // namespace

void add_bench_attack_command(CLI::App& bench) {
  auto o = std::make_shared<AttackOptions>();
  auto quick = std::make_shared<bool>(false);
  auto* cmd = bench.add_subcommand(
      "attack",
      "serve on a hostile network (loopback only): TCP pipelining without reading, slow TCP clients, a\n"
      "random-subdomain flood at a black-hole upstream beside legitimate traffic, an off-path spoofer\n"
      "racing the upstream, an all-miss fill, and worker CPU per hit. One row per target.");
  cmd->add_flag("--quick", *quick, "every figure small: under a minute in all (the ctest)");
  cmd->add_flag("--check", o->check, "exit 1 when a target that does not depend on timing is missed");
  cmd->add_option("--only", o->only, "run one scenario: tcp-pipeline, tcp-slow, flood, spoof, fill, cpu-per-hit");
  cmd->add_option("--baseline-binary", o->baseline_binary, "another dnsarena binary to compare CPU per hit with");
  cmd->add_option("--serve-config", o->serve_config, "a serve YAML config for every serve started (e.g. to compare a setting)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pipeline-queries", o->pipeline_queries, "queries the non-reading TCP client pipelines")
      ->capture_default_str();
  cmd->add_option("--slow-clients", o->slow_clients, "slow TCP clients")->capture_default_str();
  cmd->add_option("--slow-seconds", o->slow_seconds, "seconds of normal TCP queries among them")->capture_default_str();
  cmd->add_option("--flood-rate", o->flood_rate, "random-subdomain queries per second")->capture_default_str();
  cmd->add_option("--flood-seconds", o->flood_seconds, "seconds of flood")->capture_default_str();
  cmd->add_option("--spoof-names", o->spoof_names, "names resolved during the spoof race")->capture_default_str();
  cmd->add_option("--spoof-forged", o->spoof_forged, "forged answers sent")->capture_default_str();
  cmd->add_option("--spoof-seconds", o->spoof_seconds, "the race lasts at least this long (names asked at most N/S per second)")->capture_default_str();
  cmd->add_option("--fill-names", o->fill_names, "names of the all-miss fill")->capture_default_str();
  cmd->add_option("--fill-rate", o->fill_rate, "queries per second of the fill")->capture_default_str();
  cmd->add_option("--hit-rate", o->hit_rate, "queries per second of the CPU-per-hit run")->capture_default_str();
  cmd->add_option("--hit-seconds", o->hit_seconds, "seconds of the CPU-per-hit run")->capture_default_str();
  cmd->add_option("--hit-rounds", o->hit_rounds, "interleaved runs of each binary with --baseline-binary")
      ->check(CLI::Range(1u, 20u))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o, quick, cmd] {
    AttackOptions run = *o;
    if (*quick) {
      run.make_quick();
      // Figures given explicitly still win over --quick's.
      AttackOptions explicit_ = *o;
      auto keep = [&](const char* flag, auto& field, const auto& given) {
        if (cmd->count(flag)) field = given;
      };
      keep("--pipeline-queries", run.pipeline_queries, explicit_.pipeline_queries);
      keep("--slow-clients", run.slow_clients, explicit_.slow_clients);
      keep("--slow-seconds", run.slow_seconds, explicit_.slow_seconds);
      keep("--flood-rate", run.flood_rate, explicit_.flood_rate);
      keep("--flood-seconds", run.flood_seconds, explicit_.flood_seconds);
      keep("--spoof-names", run.spoof_names, explicit_.spoof_names);
      keep("--spoof-forged", run.spoof_forged, explicit_.spoof_forged);
      keep("--spoof-seconds", run.spoof_seconds, explicit_.spoof_seconds);
      keep("--fill-names", run.fill_names, explicit_.fill_names);
      keep("--fill-rate", run.fill_rate, explicit_.fill_rate);
      keep("--hit-seconds", run.hit_seconds, explicit_.hit_seconds);
    }
    const int rc = run_attack(run);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench

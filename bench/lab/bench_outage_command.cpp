// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench outage`: does the cache absorb upstream failures? Five scenarios
// (outage_scenarios.hpp: outage, dead-first, join, prefetch, slow), each run against
// `dnsarena serve` and against Unbound configured the same way (outage_resolvers.hpp), in
// the same run, one after the other on loopback, each with fresh synthetic upstreams.
// One row per judged figure and resolver with its target and whether it was met; a
// table, or `--json` (one object). `--check` exits 1 when a target of serve is missed or
// a scenario failed (Unbound's rows are the comparison, never judged by --check).
// serve's resilience keys: see outage_resolvers.hpp (`--serve-keys`).
// Bounds: every load has a count and a deadline; the children (serve, unbound, the
// upstreams) are stopped by their destructors on every path; SIGINT/SIGTERM end the run
// between phases.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/lab/commands.hpp"
#include "bench/lab/lab_interrupt.hpp"
#include "bench/lab/outage_resolvers.hpp"
#include "bench/lab/outage_scenarios.hpp"
#include "bench/lab/unbound_process.hpp"
#include "common/child_process.hpp"
#include "common/process_limits.hpp"
#include "common/sibling_program.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct OutageCommand {
  OutageOptions options;
  bool quick = false, json = false, check = false, no_unbound = false, slow = false;
  std::string only;
  std::string serve_binary;
  std::string serve_keys = "auto";
};

const char* const kOutageScenarios[] = {"outage", "dead-first", "join", "prefetch", "slow"};

using ScenarioFn = ScenarioRun (*)(const OutageContext&, const ResolverKind&);
ScenarioFn scenario_fn(const std::string& name) {
  if (name == "outage") return run_outage_scenario;
  if (name == "dead-first") return run_dead_first_scenario;
  if (name == "join") return run_join_scenario;
  if (name == "slow") return run_slow_scenario;
  return run_prefetch_scenario;
}

nlohmann::json options_json(const OutageOptions& o) {
  return {{"seed", o.seed},
          {"response_timer_ms", o.response_timer_ms},
          {"timer_slack_ms", o.timer_slack_ms},
          {"client_timeout_s", o.client_timeout_s},
          {"outage_names", o.outage_names},
          {"outage_ttl_s", o.outage_ttl_s},
          {"blackhole_s", o.blackhole_s},
          {"outage_rate", o.outage_rate},
          {"zipf", o.zipf},
          {"dead_first_misses", o.dead_first_misses},
          {"dead_first_rate", o.dead_first_rate},
          {"live_rtt_ms", o.live_rtt_ms},
          {"join_clients", o.join_clients},
          {"join_rounds", o.join_rounds},
          {"join_delay_ms", o.join_delay_ms},
          {"prefetch_rate", o.prefetch_rate},
          {"prefetch_seconds", o.prefetch_seconds},
          {"prefetch_ttl_s", o.prefetch_ttl_s},
          {"prefetch_delay_ms", o.prefetch_delay_ms},
          {"slow_names", o.slow_names},
          {"slow_fast_after", o.slow_fast_after},
          {"slow_client_timeout_s", o.slow_client_timeout_s},
          {"slow_every_query", o.slow_every_query}};
}

int run_outage_bench(const OutageCommand& c) {
  install_lab_interrupt();
  common::raise_nofile_soft_limit(c.options.join_clients + 1024);
  const std::string lab = common::self_executable();  // dnsarena-lab: sim upstream, sim load
  const std::string serve_bin = c.serve_binary.empty() ? common::daemon_program() : c.serve_binary;
  const std::string dir = "/tmp/dnsarena-bench-outage-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const auto t0 = Clock::now();

  const ServeSetup serve = prepare_serve(serve_bin, dir, parse_serve_keys(c.serve_keys), c.options.response_timer_ms);
  std::vector<ResolverKind> kinds{serve_kind(serve, dir)};
  const bool have_unbound = unbound_installed();
  std::string unbound_note;
  if (c.no_unbound) unbound_note = "skipped (--no-unbound)";
  else if (!have_unbound) unbound_note = "not installed (apt-get install unbound)";
  else kinds.push_back(unbound_kind(dir, c.options.response_timer_ms));

  const OutageContext ctx{lab, dir, c.options, g_lab_interrupted};
  std::vector<OutageRow> rows;
  nlohmann::json details = nlohmann::json::object();
  std::vector<std::string> errors;
  for (const char* scenario : kOutageScenarios) {
    if (!c.only.empty() && c.only != scenario) continue;
    for (const ResolverKind& kind : kinds) {
      if (g_lab_interrupted) break;
      try {
        ScenarioRun run = scenario_fn(scenario)(ctx, kind);
        for (OutageRow& r : run.rows) rows.push_back(std::move(r));
        details[scenario][kind.name] = std::move(run.detail);
      } catch (const std::exception& e) {
        const std::string what = std::string(scenario) + " (" + kind.name + "): " + e.what();
        errors.push_back(what);
        rows.push_back({scenario, kind.name, "", "error: " + std::string(e.what()), std::nullopt});
        details[scenario][kind.name] = {{"error", e.what()}};
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  bool missed = false;
  for (const OutageRow& r : rows)
    if (r.server == "dnsarena" && r.met == false) missed = true;

  if (c.json) {
    nlohmann::json j;
    j["benchmark"] = "outage";
    j["quick"] = c.quick;
    j["seed"] = c.options.seed;
    j["seconds"] = seconds;
    j["interrupted"] = g_lab_interrupted.load();
    double load[3] = {0, 0, 0};
    if (::getloadavg(load, 3) == 3) j["load_average"] = {load[0], load[1], load[2]};
    j["options"] = options_json(c.options);
    j["serve"] = serve.to_json();
    j["serve"]["binary"] = serve_bin;
    j["serve"]["workers"] = 2;
    j["unbound"] = {{"version", have_unbound ? unbound_version() : ""},
                    {"threads", 2},
                    {"run", kinds.size() > 1},
                    {"config", unbound_resilience_lines(c.options.response_timer_ms)}};
    if (!unbound_note.empty()) j["unbound"]["note"] = unbound_note;
    j["rows"] = nlohmann::json::array();
    for (const OutageRow& r : rows)
      j["rows"].push_back({{"scenario", r.scenario}, {"server", r.server}, {"target", r.target}, {"figure", r.figure},
                           {"met", r.met ? nlohmann::json(*r.met) : nlohmann::json(nullptr)}});
    j["scenarios"] = details;
    j["errors"] = errors;
    std::cout << j.dump() << "\n";
  } else {
    const std::string unbound_text =
        kinds.size() > 1 ? "unbound " + unbound_version() + " with 2 threads" : "unbound " + unbound_note;
    std::printf("dnsarena-lab bench outage%s: seed %llu, %.0f s; serve with 2 workers, %s (files in %s)\n",
                c.quick ? " --quick" : "", static_cast<unsigned long long>(c.options.seed), seconds,
                unbound_text.c_str(), dir.c_str());
    std::string used, omitted;
    for (const std::string& k : serve.keys_used) used += " " + k;
    for (const std::string& k : serve.keys_omitted) omitted += " " + k;
    std::printf("serve's resilience keys:%s%s%s\n", used.empty() ? " none" : used.c_str(),
                omitted.empty() ? "" : "; left out (unknown to this serve):", omitted.c_str());
    std::printf("%-16s %-9s %-4s %-44s %s\n", "scenario", "server", "met", "target", "figure");
    for (const OutageRow& r : rows)
      std::printf("%-16s %-9s %-4s %-44s %s\n", r.scenario.c_str(), r.server.c_str(),
                  !r.met ? "-" : *r.met ? "yes" : "NO", r.target.c_str(), r.figure.c_str());
    if (g_lab_interrupted) std::printf("interrupted: the remaining scenarios were skipped\n");
  }
  if (!errors.empty() || g_lab_interrupted) return 1;
  return c.check && missed ? 1 : 0;
}

}  // namespace

void add_bench_outage_command(CLI::App& bench) {
  auto c = std::make_shared<OutageCommand>();
  auto* cmd = bench.add_subcommand(
      "outage",
      "Does the cache absorb upstream failures? serve (2 workers) and Unbound 1.17 (2 threads, serve-expired,\n"
      "prefetch) in the same run, each with fresh synthetic upstreams on loopback:\n"
      "  outage      cached names expire while the upstream is a black hole, under Zipf load: share answered\n"
      "              within the response timer (>= 99.9%), p99; upstream queries per name on recovery (<= 1)\n"
      "  dead-first  the first of two upstreams dead: p99 miss latency (<= 2 x the live one's RTT + 1 ms)\n"
      "  join        many clients ask one uncached name at once: upstream queries (exactly 1)\n"
      "  prefetch    one popular name with a short TTL: client-visible misses (0), extra upstream load\n"
      "  slow        an upstream slow by 1.2/2.5/4 s for some names, nothing stale: share answered within a\n"
      "              stub's 5 s and latency (all), then fast names answered right after (100%)\n"
      "serve's stale/failure_cache/prefetch keys are left out when the serve binary does not know them\n"
      "(--serve-keys auto).");
  OutageOptions& o = c->options;
  cmd->add_flag("--quick", c->quick, "every figure small (about two minutes for all; one scenario: the ctest)");
  cmd->add_flag("--json", c->json, "print one JSON object");
  cmd->add_flag("--check", c->check, "exit 1 when a target of serve is missed or a scenario failed");
  cmd->add_option("--only", c->only, "run one scenario: outage, dead-first, join, prefetch, slow")
      ->check(CLI::IsMember({"outage", "dead-first", "join", "prefetch", "slow"}));
  cmd->add_flag("--slow", c->slow, "run the slow scenario alone (as --only slow)");
  cmd->add_flag("--no-unbound", c->no_unbound, "run serve only");
  cmd->add_option("--serve-binary", c->serve_binary, "the dnsarena program whose serve is measured (default: the dnsarena beside this program, else on PATH)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--serve-keys", c->serve_keys,
                  "serve's resilience keys: auto (those this serve knows), all (a serve that rejects one fails), none")
      ->check(CLI::IsMember({"auto", "all", "none"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the names, answers and query stream")->capture_default_str();
  cmd->add_option("--response-timer-ms", o.response_timer_ms,
                  "serve's stale.client_timeout_ms and Unbound's serve-expired-client-timeout")
      ->check(CLI::Range(100u, 10000u))
      ->capture_default_str();
  cmd->add_option("--timer-slack-ms", o.timer_slack_ms, "an answer this much after the timer still counts as within it")
      ->capture_default_str();
  cmd->add_option("--client-timeout", o.client_timeout_s, "seconds a client waits for an answer (a stub's)")
      ->check(CLI::Range(0.5, 30.0))
      ->capture_default_str();
  cmd->add_option("--outage-names", o.outage_names, "outage: cached names")->check(CLI::Range(10u, 1000000u))->capture_default_str();
  cmd->add_option("--outage-ttl", o.outage_ttl_s, "outage: their TTL, seconds")->check(CLI::Range(1u, 600u))->capture_default_str();
  cmd->add_option("--blackhole-seconds", o.blackhole_s, "outage: how long the upstream is a black hole")
      ->check(CLI::Range(5.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--outage-rate", o.outage_rate, "outage: Zipf queries per second")->check(CLI::Range(10.0, 100000.0))->capture_default_str();
  cmd->add_option("--zipf", o.zipf, "outage: Zipf exponent of the names' popularity")->check(CLI::Range(0.0, 3.0))->capture_default_str();
  cmd->add_option("--dead-first-misses", o.dead_first_misses, "dead-first: misses measured")->check(CLI::Range(10u, 1000000u))->capture_default_str();
  cmd->add_option("--dead-first-rate", o.dead_first_rate, "dead-first: misses per second")->check(CLI::Range(1.0, 100000.0))->capture_default_str();
  cmd->add_option("--live-rtt-ms", o.live_rtt_ms, "dead-first: the live upstream's delay")->check(CLI::Range(0u, 1000u))->capture_default_str();
  cmd->add_option("--join-clients", o.join_clients, "join: clients asking at once")->check(CLI::Range(2u, 20000u))->capture_default_str();
  cmd->add_option("--join-rounds", o.join_rounds, "join: rounds, a new name each")->check(CLI::Range(1u, 1000u))->capture_default_str();
  cmd->add_option("--join-delay-ms", o.join_delay_ms, "join: the upstream's delay")->check(CLI::Range(0u, 5000u))->capture_default_str();
  cmd->add_option("--prefetch-rate", o.prefetch_rate, "prefetch: queries per second for the name")->check(CLI::Range(1.0, 100000.0))->capture_default_str();
  cmd->add_option("--prefetch-seconds", o.prefetch_seconds, "prefetch: how long")->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  cmd->add_option("--prefetch-ttl", o.prefetch_ttl_s, "prefetch: the name's TTL, seconds")->check(CLI::Range(1u, 600u))->capture_default_str();
  cmd->add_option("--prefetch-delay-ms", o.prefetch_delay_ms, "prefetch: the upstream's delay")->check(CLI::Range(2u, 5000u))->capture_default_str();
  cmd->add_option("--slow-names", o.slow_names, "slow: names per delay (1.2, 2.5, 4 s), asked at once")->check(CLI::Range(1u, 1000u))->capture_default_str();
  cmd->add_option("--slow-fast-after", o.slow_fast_after, "slow: fast names asked right after")->check(CLI::Range(1u, 10000u))->capture_default_str();
  cmd->add_option("--slow-client-timeout", o.slow_client_timeout_s, "slow: seconds a stub waits")->check(CLI::Range(1.0, 30.0))->capture_default_str();
  cmd->add_flag("--slow-every-query", o.slow_every_query,
                "slow: every query of a slow name takes its delay, retries included (default: a cold name at a "
                "recursive upstream, resolved once)");
  cmd->callback([c, cmd] {
    OutageCommand run = *c;
    if (run.slow) {
      if (!run.only.empty() && run.only != "slow") throw CLI::ValidationError("--slow", "is --only slow");
      run.only = "slow";
    }
    if (run.quick) {
      run.options.make_quick();
      // Figures given explicitly still win over --quick's.
      for (const CLI::Option* opt : cmd->get_options()) {
        if (opt->count() == 0) continue;
        const std::string& n = opt->get_name();
        const OutageOptions& given = c->options;
        OutageOptions& to = run.options;
        if (n == "--outage-names") to.outage_names = given.outage_names;
        else if (n == "--blackhole-seconds") to.blackhole_s = given.blackhole_s;
        else if (n == "--outage-rate") to.outage_rate = given.outage_rate;
        else if (n == "--dead-first-misses") to.dead_first_misses = given.dead_first_misses;
        else if (n == "--dead-first-rate") to.dead_first_rate = given.dead_first_rate;
        else if (n == "--join-clients") to.join_clients = given.join_clients;
        else if (n == "--join-rounds") to.join_rounds = given.join_rounds;
        else if (n == "--prefetch-rate") to.prefetch_rate = given.prefetch_rate;
        else if (n == "--prefetch-seconds") to.prefetch_seconds = given.prefetch_seconds;
        else if (n == "--prefetch-ttl") to.prefetch_ttl_s = given.prefetch_ttl_s;
      }
    }
    const int rc = run_outage_bench(run);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dnsarena::bench

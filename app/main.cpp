// The `dnsarena` program: one binary, one subcommand per job, every subcommand in the one
// table below. A module offers `add_<name>_command(CLI::App& parent)` in its commands
// header; this file alone decides where each command hangs and in what order `--help`
// lists them. app/ may link every module; no module links app/ (README: Architecture).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <string_view>

#include "admin/commands.hpp"
#include "bench/commands.hpp"
#include "cache/format_version.hpp"
#include "sim/fleet/fleet_commands.hpp"
#include "sim/layouts/layouts_command.hpp"
#include "sim/traffic/commands.hpp"
#include "sim/validate/commands.hpp"
#include "workers/commands.hpp"

namespace {

// `dnsarena sim`: a group; `sim` alone is an error that lists its subcommands.
void add_sim_group(CLI::App& app) {
  app.add_subcommand("sim", "Simulator: layouts, fleet rollout, capacity tuning, workloads")->require_subcommand(1);
}

struct Command {
  std::string_view parent;  // "" for `dnsarena <name>`, else the group it hangs below
  void (*add)(CLI::App& parent);
};

// Every subcommand of dnsarena, in --help order. A parent must appear before its children.
constexpr Command kCommands[] = {
    {"", dnsarena::bench::add_bench_command},             // bench         cache benchmark
    {"bench", dnsarena::bench::add_bench_serve_command},  // bench serve   serve vs dnsperf/unbound
    {"bench", dnsarena::bench::add_bench_torture_command},  // bench torture  kill -9 torture of one segment
    {"bench", dnsarena::bench::add_bench_attack_command}, // bench attack  serve on a hostile network
    {"bench", dnsarena::bench::add_bench_outage_command}, // bench outage  upstream failures, beside Unbound
    {"", dnsarena::workers::add_check_command},           // check SEGMENT fsck of a segment
    {"", dnsarena::admin::add_dump_command},              // dump SEGMENT  entries as text
    {"", dnsarena::admin::add_flush_command},             // flush NAME    remove a name's entries
    {"", dnsarena::admin::add_migrate_command},           // migrate SEG   warm upgrade of a stopped cache
    {"", dnsarena::admin::add_restore_command},           // restore FILE  load a dump
    {"", dnsarena::workers::add_serve_command},           // serve         supervisor + workers
    {"", dnsarena::workers::add_stats_command},           // stats         counters of a segment
    {"", dnsarena::admin::add_top_command},               // top           hottest, largest entries
    {"", add_sim_group},                                  // sim ...
    {"sim", dnsarena::sim::add_layouts_command},          // sim layouts   layout table, our arena
    {"sim", dnsarena::sim::add_upstream_command},         // sim upstream  synthetic authoritative
    {"sim", dnsarena::sim::add_load_command},             // sim load      load client
    {"sim", dnsarena::sim::fleet::add_rollout_command},   // sim rollout   fleet RSS during a rollout
    {"sim", dnsarena::sim::fleet::add_tune_command},      // sim tune      capacity per datacenter
    {"sim", dnsarena::sim::fleet::add_sweep_command},     // sim sweep     datacenters x capacities x layouts x plans
    {"sim", dnsarena::sim::fleet::add_validate_command},  // sim validate  real service vs the model (sim/validate)
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dnsarena: a compact DNS answer cache in one shared-memory segment, shared by\n"
               "resolver worker processes, and a fleet simulator calibrated on it."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", "dnsarena " DNSARENA_VERSION " (segment format " +
                                        std::to_string(dnsarena::cache::kFormatVersion) + ")");
  for (const Command& c : kCommands) c.add(c.parent.empty() ? app : *app.get_subcommand(std::string(c.parent)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "dnsarena: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

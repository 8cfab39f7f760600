// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab`: the fleet simulator (`sim ...`) and the lab benchmarks (`bench serve`,
// `bench attack`, `bench torture`, `bench outage`), the second program beside the daemon `dnsarena`
// (app/main.cpp). The commands that run the real service (`sim validate`, `bench serve`,
// `bench attack`) exec the daemon found beside this program (common/sibling_program.hpp).
// Every subcommand is in the table below (common/command_table.hpp); app/lab/ may link
// every module, no module links it.
#include <string>

#include "bench/lab/commands.hpp"
#include "cache/format_version.hpp"
#include "common/command_table.hpp"
#include "sim/fit/commands.hpp"
#include "sim/fleet/fleet_commands.hpp"
#include "sim/layouts/layouts_command.hpp"
#include "sim/traffic/commands.hpp"
#include "sim/validate/commands.hpp"

namespace {

using dnsarena::common::Command;

void add_bench_group(CLI::App& app) {
  dnsarena::common::add_command_group(app, "bench", "Lab benchmarks: the service against other resolvers, "
                                                    "under attack, and kill -9 torture");
}
void add_sim_group(CLI::App& app) {
  dnsarena::common::add_command_group(app, "sim", "Simulator: layouts, fleet rollout, capacity tuning, workloads");
}

// Every subcommand of dnsarena-lab, in --help order. A parent must appear before its children.
constexpr Command kCommands[] = {
    {"", add_bench_group},                                  // bench ...
    {"bench", dnsarena::bench::add_bench_serve_command},    // bench serve    serve vs dnsperf/unbound/kresd
    {"bench", dnsarena::bench::add_bench_torture_command},  // bench torture  kill -9 torture of one segment
    {"bench", dnsarena::bench::add_bench_attack_command},   // bench attack   serve on a hostile network
    {"bench", dnsarena::bench::add_bench_outage_command},   // bench outage   upstream failures, beside Unbound
    {"bench", dnsarena::bench::add_bench_upstream_command}, // bench upstream misses over udp, tcp, tls upstreams
    {"bench", dnsarena::bench::add_bench_tls_idle_command}, // bench tls-idle idle DoT connections within the bound
    {"bench", dnsarena::bench::add_bench_floor_command},    // bench floor-server  a responder that only answers
    {"bench", dnsarena::bench::add_bench_recursive_command},  // bench recursive  resolving from the root, beside Unbound and kresd
    {"bench", dnsarena::bench::add_bench_mrc_command},      // bench mrc      the miss-ratio curve against real sizes
    {"", add_sim_group},                                    // sim ...
    {"sim", dnsarena::sim::add_layouts_command},            // sim layouts   layout table, our arena
    {"sim", dnsarena::sim::add_upstream_command},           // sim upstream  synthetic authoritative
    {"sim", dnsarena::sim::add_load_command},               // sim load      load client
    {"sim", dnsarena::sim::fleet::add_rollout_command},     // sim rollout   fleet RSS during a rollout
    {"sim", dnsarena::sim::fleet::add_tune_command},        // sim tune      capacity per datacenter
    {"sim", dnsarena::sim::fleet::add_sweep_command},       // sim sweep     datacenters x capacities x layouts x plans
    {"sim", dnsarena::sim::fleet::add_validate_command},    // sim validate  real service vs the model (sim/validate)
    {"sim", dnsarena::sim::add_fit_command},                // sim fit       traffic profile from dnstap captures
};

// The daemon's commands, which may be looked for here.
constexpr dnsarena::common::CommandElsewhere kDaemonCommands[] = {
    {"serve", "dnsarena"}, {"stats", "dnsarena"},   {"check", "dnsarena"},   {"flush", "dnsarena"},
    {"dump", "dnsarena"},  {"restore", "dnsarena"}, {"top", "dnsarena"},     {"migrate", "dnsarena"},
};

}  // namespace

int main(int argc, char** argv) {
  const dnsarena::common::ProgramInfo program{
      "dnsarena-lab",
      "dnsarena-lab: the fleet simulator calibrated on the dnsarena cache, and the lab\n"
      "benchmarks that run the dnsarena daemon (found beside this program).",
      "dnsarena-lab " DNSARENA_VERSION " (segment format " + std::to_string(dnsarena::cache::kFormatVersion) + ")",
      kDaemonCommands};
  return dnsarena::common::run_command_table(program, kCommands, argc, argv);
}

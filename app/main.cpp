// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena`, the daemon: serve and the operator commands on a live cache, and the cache
// benchmark operators run to calibrate. It is what the systemd unit and the dnsarena
// package run, so it links only what serving needs: no simulator, TBB, MPI or raw
// sockets (cmake/DependencyRule.cmake checks that). The simulator and the lab benches are
// the second program, `dnsarena-lab` (app/lab/main.cpp). Every subcommand is in the table
// below (common/command_table.hpp); app/ may link the daemon's modules, no module links it.
#include <string>

#include "admin/commands.hpp"
#include "bench/commands.hpp"
#include "cache/format_version.hpp"
#include "common/command_table.hpp"
#include "dnssec/commands.hpp"
#include "policy/commands.hpp"
#include "workers/commands.hpp"

namespace {

using dnsarena::common::Command;

// Every subcommand of dnsarena, in --help order. A parent must appear before its children.
constexpr Command kCommands[] = {
    {"", dnsarena::bench::add_bench_command},    // bench         cache benchmark
    {"", dnsarena::admin::add_check_command},    // check SEGMENT fsck of a segment
    {"", dnsarena::dnssec::add_dnssec_command},  // dnssec ...    validator bench, check-trust
    {"dnssec", dnsarena::admin::add_nta_command},  // dnssec nta  run-time negative trust anchors
    {"", dnsarena::admin::add_dump_command},     // dump SEGMENT  entries as text
    {"", dnsarena::admin::add_flush_command},    // flush NAME    remove a name's entries
    {"", dnsarena::admin::add_migrate_command},  // migrate SEG   warm upgrade of a stopped cache
    {"", dnsarena::policy::add_policy_command},  // policy ...    check RPZ files, policy bench
    {"", dnsarena::admin::add_restore_command},  // restore FILE  load a dump
    {"", dnsarena::workers::add_serve_command},  // serve         supervisor + workers
    {"", dnsarena::workers::add_stats_command},  // stats         counters of a segment
    {"", dnsarena::admin::add_top_command},      // top           hottest, largest entries
    {"", dnsarena::workers::add_zonemd_command},  // zonemd FILE  check a zone file's ZONEMD (RFC 8976)
};

// The lab's commands, which operators may look for here.
constexpr dnsarena::common::CommandElsewhere kLabCommands[] = {
    {"sim", "dnsarena-lab"},
    {"bench serve", "dnsarena-lab"},
    {"bench attack", "dnsarena-lab"},
    {"bench torture", "dnsarena-lab"},
    {"bench outage", "dnsarena-lab"},
};

}  // namespace

int main(int argc, char** argv) {
  const dnsarena::common::ProgramInfo program{
      "dnsarena",
      "dnsarena: a compact DNS answer cache in one shared-memory segment, shared by resolver\n"
      "worker processes. The simulator and the lab benchmarks are dnsarena-lab.",
      "dnsarena " DNSARENA_VERSION " (segment format " + std::to_string(dnsarena::cache::kFormatVersion) + ")",
      kLabCommands};
  return dnsarena::common::run_command_table(program, kCommands, argc, argv);
}

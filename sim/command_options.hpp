// SPDX-License-Identifier: GPL-3.0-or-later
// The shape every `dnsarena-lab sim ...` command is registered in, and the options several
// of them share (fleet file, output directory, calibration cache, JSON, seed), spelt once.
//
//   auto [cmd, args] = add_command<RolloutArgs>(sim, "rollout", "help...", run);
//   add_fleet_run_options(*cmd, *args, "rollout-out");
//
// Args types that take the fleet options derive from FleetRunOptions.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common/add_command.hpp"

namespace dnsarena::sim {

// Every sim command is registered through common::add_command.
using common::add_command;

// --json: one machine-readable JSON document, alone on stdout (a command that also prints
// its human report then sends the report to stderr), so `... --json | jq` works.
inline void add_json_flag(CLI::App& cmd, bool& json,
                          const char* what = "Print one JSON document on stdout (the human report goes to stderr)") {
  cmd.add_flag("--json", json, what);
}

inline void add_seed_option(CLI::App& cmd, std::uint64_t& seed, const char* what) {
  cmd.add_option("--seed", seed, what)->capture_default_str();
}

// The options of the fleet model's commands (sim rollout, sim tune).
struct FleetRunOptions {
  std::string fleet, out, calibration;
  bool json = false;
};

// --fleet (required), --out (default `default_out`), --calibration, --json.
inline void add_fleet_run_options(CLI::App& cmd, FleetRunOptions& o, const char* default_out,
                                  const char* json_what = "Print one JSON object last") {
  o.out = default_out;
  cmd.add_option("--fleet", o.fleet, "Fleet YAML (e.g. configs/fleet/seed.yaml)")->required()->check(CLI::ExistingFile);
  cmd.add_option("--out", o.out, "Output directory")->capture_default_str();
  cmd.add_option("--calibration", o.calibration, "Layout calibration cache (default DIR/calibration.json)");
  add_json_flag(cmd, o.json, json_what);
}

}  // namespace dnsarena::sim

// `dnsarena sim rollout`, `sim tune` and `sim validate`: the fleet simulator's commands.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim::fleet {

void add_rollout_command(CLI::App& sim);
void add_tune_command(CLI::App& sim);
void add_validate_command(CLI::App& sim);

}  // namespace dnsarena::sim::fleet

namespace dnsarena::sim {
// Registers every fleet command on `sim` (the one line in sim_commands.cpp).
void add_fleet_commands(CLI::App& sim);
}  // namespace dnsarena::sim

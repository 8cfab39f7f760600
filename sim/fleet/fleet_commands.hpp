// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim rollout`, `sim tune` and `sim sweep`: the fleet simulator's commands,
// registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim::fleet {

void add_rollout_command(CLI::App& sim);
void add_tune_command(CLI::App& sim);
void add_sweep_command(CLI::App& sim);  // sweep_command.cpp

}  // namespace dnsarena::sim::fleet

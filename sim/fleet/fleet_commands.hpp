// `dnsarena sim rollout` and `sim tune`: the fleet simulator's commands,
// registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim::fleet {

void add_rollout_command(CLI::App& sim);
void add_tune_command(CLI::App& sim);

}  // namespace dnsarena::sim::fleet

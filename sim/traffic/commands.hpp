// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim upstream` (synthetic authoritative) and `dnsarena-lab sim load` (load client),
// registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// Registers `upstream` on the `sim` subcommand (upstream_command.cpp).
void add_upstream_command(CLI::App& sim);
// Registers `load` on the `sim` subcommand (load_command.cpp).
void add_load_command(CLI::App& sim);

}  // namespace dnsarena::sim

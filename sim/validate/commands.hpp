// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim validate`: the real service against the fleet model, registered by the
// command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim::fleet {

// Registers `validate` on the `sim` subcommand (validate_command.cpp).
void add_validate_command(CLI::App& sim);

}  // namespace dnsarena::sim::fleet

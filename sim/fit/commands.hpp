// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim fit` (a traffic profile fitted to dnstap captures), registered by the
// command table (app/lab/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// Registers `fit` on the `sim` subcommand (fit_command.cpp).
void add_fit_command(CLI::App& sim);

}  // namespace dnsarena::sim

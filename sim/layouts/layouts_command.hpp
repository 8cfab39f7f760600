// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim layouts`: the published fleet's layout table reproduced on our mix, our arena beside it.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// Registers `layouts` on the `sim` subcommand.
void add_layouts_command(CLI::App& sim);

}  // namespace dnsarena::sim

// SPDX-License-Identifier: GPL-3.0-or-later
// Subcommands that live in workers/: `serve`, `stats`,
// registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::workers {

// `dnsarena serve --config configs/serve.yaml`: supervisor + resolver workers.
void add_serve_command(CLI::App& app);
// `dnsarena stats [--segment NAME] [--json]`: per-worker and total counters.
void add_stats_command(CLI::App& app);

}  // namespace dnsarena::workers

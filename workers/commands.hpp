// SPDX-License-Identifier: GPL-3.0-or-later
// Subcommands that live in workers/: `serve`, `stats`, `zonemd`,
// registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::workers {

// `dnsarena serve --config configs/serve.yaml`: supervisor + resolver workers.
void add_serve_command(CLI::App& app);
// `dnsarena stats [--segment NAME] [--json]`: per-worker and total counters.
void add_stats_command(CLI::App& app);
// `dnsarena zonemd FILE [--origin NAME] [--json]`: a zone file's ZONEMD (RFC 8976) checked
// as recursion.local_root checks it, with the CPU time of the read and of the digest.
void add_zonemd_command(CLI::App& app);

}  // namespace dnsarena::workers

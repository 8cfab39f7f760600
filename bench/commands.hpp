// SPDX-License-Identifier: GPL-3.0-or-later
// The cache benchmark as a subcommand, registered by the daemon's command table
// (app/main.cpp). The lab benches are bench/lab/commands.hpp.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::bench {

// `dnsarena bench`: fills a private segment with the seed's mix and measures it.
void add_bench_command(CLI::App& app);

}  // namespace dnsarena::bench

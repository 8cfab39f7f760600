// Subcommands that live in sim/: `bench` (the cache benchmark) and `sim ...`.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// `dnsarena bench`: fills a private segment with the seed's mix and measures it.
void add_bench_command(CLI::App& app);
// `dnsarena sim ...`: the simulator's subcommands (layouts, rollout, tune, upstream, load...).
// Each sim feature registers itself on the `sim` subcommand passed in.
void add_sim_commands(CLI::App& sim);

}  // namespace dnsarena::sim

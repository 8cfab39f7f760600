// Subcommands that live in sim/: `bench` (the cache benchmark) and `sim ...`.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// `dnsarena bench`: fills a private segment with the seed's mix and measures it.
// Returns the `bench` subcommand so other modules can add benchmarks under it
// (e.g. `dnsarena bench serve`); `bench` alone runs the cache benchmark.
CLI::App* add_bench_command(CLI::App& app);
// `dnsarena sim ...`: the simulator's subcommands (layouts, rollout, tune, upstream, load...).
// Each sim feature registers itself on the `sim` subcommand passed in.
void add_sim_commands(CLI::App& sim);

}  // namespace dnsarena::sim

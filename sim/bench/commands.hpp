// `dnsarena bench`: the cache benchmark, registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// `dnsarena bench`: fills a private segment with the seed's mix and measures it. Other
// benchmarks hang below it in the command table (`dnsarena bench serve`); `bench` alone
// runs the cache benchmark.
void add_bench_command(CLI::App& app);

}  // namespace dnsarena::sim

// Benchmarks as subcommands, registered by the command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::bench {

// `dnsarena bench`: fills a private segment with the seed's mix and measures it. Other
// benchmarks hang below it in the command table; `bench` alone runs the cache benchmark.
void add_bench_command(CLI::App& app);
// `dnsarena bench serve`: serve against dnsperf (and unbound when installed).
void add_bench_serve_command(CLI::App& bench);
// `dnsarena bench torture`: random kill -9 of readers and writers on one segment.
void add_bench_torture_command(CLI::App& bench);
// `dnsarena bench attack`: serve on a hostile network, the figures of issue 11.
void add_bench_attack_command(CLI::App& bench);
// `dnsarena bench outage`: upstream failures absorbed by the cache, beside Unbound.
void add_bench_outage_command(CLI::App& bench);

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// The lab benches as subcommands of `dnsarena-lab bench`, registered by the lab's command
// table (app/lab/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::bench {

// `dnsarena-lab bench serve`: serve against dnsperf (and unbound, kresd when installed).
void add_bench_serve_command(CLI::App& bench);
// `dnsarena-lab bench torture`: random kill -9 of readers and writers on one segment.
void add_bench_torture_command(CLI::App& bench);
// `dnsarena-lab bench attack`: serve on a hostile network (floods, slow and pipelining
// TCP clients, an off-path spoofer).
void add_bench_attack_command(CLI::App& bench);
// `dnsarena-lab bench outage`: upstream failures absorbed by the cache, beside Unbound.
void add_bench_outage_command(CLI::App& bench);
// `dnsarena-lab bench upstream`: misses over each upstream transport (udp, tcp, tls).
void add_bench_upstream_command(CLI::App& bench);
// `dnsarena-lab bench tls-idle`: idle DoT connections held by one worker, within its bound.
void add_bench_tls_idle_command(CLI::App& bench);
// `dnsarena-lab bench floor-server`: a responder that only answers, the floor bench serve
// measures the servers against.
void add_bench_floor_command(CLI::App& bench);
void add_bench_recursive_command(CLI::App& bench);
// `dnsarena-lab bench mrc`: one serve's miss-ratio curve against real serves at other sizes.
void add_bench_mrc_command(CLI::App& bench);

}  // namespace dnsarena::bench

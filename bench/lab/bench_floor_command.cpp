// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench floor-server`: the do-nothing DNS responder (floor_responder.hpp) that
// `bench serve` measures beside the real servers, runnable alone to measure by hand.
#include <cstdio>
#include <exception>
#include <string>

#include "bench/lab/commands.hpp"
#include "common/add_command.hpp"
#include "bench/lab/floor_responder.hpp"

namespace dnsarena::bench {

namespace {
struct FloorOptions {
  std::string address = "127.0.0.1";
  unsigned port = 0;
};

int run_floor_server(const FloorOptions& o) {
  try {
    const FloorCounters c = run_floor_responder(o.address, static_cast<std::uint16_t>(o.port));
    std::printf("floor-server: %llu UDP answers, %llu TCP answers, %llu dropped, %llu connections closed\n",
                static_cast<unsigned long long>(c.udp_answers), static_cast<unsigned long long>(c.tcp_answers),
                static_cast<unsigned long long>(c.dropped), static_cast<unsigned long long>(c.connections_closed));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dnsarena-lab bench floor-server: %s\n", e.what());
    return 1;
  }
}
}  // namespace

void add_bench_floor_command(CLI::App& bench) {
  auto [cmd, o] = common::add_command<FloorOptions>(
      bench, "floor-server",
      "A DNS responder that does nothing but answer: each query comes back as its own response (QR set),\n"
      "over UDP and TCP on --address:--port, one thread, epoll; no cache, no parsing, no TLS. What a query\n"
      "costs the kernel and an event loop alone at a given rate: the floor bench serve measures beside the\n"
      "servers. Runs until SIGINT or SIGTERM, then prints what it answered.",
      run_floor_server);
  cmd->add_option("--address", o->address, "IPv4 or IPv6 address to listen on (default 127.0.0.1)");
  cmd->add_option("--port", o->port, "UDP and TCP port")->required()->check(CLI::Range(1u, 65535u));
}

}  // namespace dnsarena::bench

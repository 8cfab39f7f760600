// `dnsarena sim upstream` (synthetic authoritative) and `dnsarena sim load` (load client).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::sim {

// Registers `upstream` and `load` on the `sim` subcommand.
void add_traffic_commands(CLI::App& sim);

}  // namespace dnsarena::sim

// Registers every `dnsarena sim ...` subcommand. Each feature adds one line here.
#include "sim/commands.hpp"

namespace dnsarena::sim {

void add_sim_commands(CLI::App& sim) {
  (void)sim;
}

}  // namespace dnsarena::sim

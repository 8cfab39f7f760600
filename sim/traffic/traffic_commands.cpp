// Registers the traffic commands (`sim upstream`, `sim load`).
#include "sim/traffic/commands.hpp"

namespace dnsarena::sim {

void add_upstream_command(CLI::App& sim);
void add_load_command(CLI::App& sim);

void add_traffic_commands(CLI::App& sim) {
  add_upstream_command(sim);
  add_load_command(sim);
}

}  // namespace dnsarena::sim

// Registers every `dnsarena sim ...` subcommand. Each feature adds one line here.
#include "sim/commands.hpp"

namespace dnsarena::sim {
void add_traffic_commands(CLI::App& sim);  // sim/traffic/commands.hpp

void add_layouts_command(CLI::App& sim);  // sim/layouts/layouts_command.hpp
void add_fleet_commands(CLI::App& sim);  // sim/fleet/fleet_commands.hpp

void add_sim_commands(CLI::App& sim) {
  add_layouts_command(sim);
  (void)sim;
  add_traffic_commands(sim);
  add_fleet_commands(sim);
}

}  // namespace dnsarena::sim

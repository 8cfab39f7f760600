// The `dnsarena` program: one binary, one subcommand per job.
#include <CLI/CLI.hpp>
#include <iostream>

#include "sim/commands.hpp"
#include "workers/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dnsarena: a compact DNS answer cache in one shared-memory segment, shared by\n"
               "resolver worker processes, and a fleet simulator calibrated on it."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  // `bench` runs the cache benchmark; further benchmarks hang below it (bench->add_subcommand).
  CLI::App* bench = dnsarena::sim::add_bench_command(app);
  dnsarena::workers::add_bench_serve_command(*bench);
  dnsarena::workers::add_check_command(app);
  dnsarena::workers::add_serve_command(app);
  dnsarena::workers::add_stats_command(app);
  auto* sim = app.add_subcommand("sim", "Simulator: layouts, fleet rollout, capacity tuning, workloads");
  sim->require_subcommand(1);
  dnsarena::sim::add_sim_commands(*sim);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "dnsarena: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

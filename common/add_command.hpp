// The one shape every dnsarena subcommand is registered in (app/main.cpp's command table
// calls each module's add_*_command, which calls this):
//
//   auto [cmd, args] = common::add_command<FlushRequest>(app, "flush", "help...", run_flush);
//   cmd->add_option("name", args->name, "...");
//
// The Args object lives as long as the CLI::App (shared with the callback); options bind
// to its fields; running the subcommand calls run(args).
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>

namespace dnsarena::common {

template <class Args, class Run>
std::pair<CLI::App*, std::shared_ptr<Args>> add_command(CLI::App& parent, const char* name, const std::string& help,
                                                        Run run) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = parent.add_subcommand(name, help);
  cmd->callback([args, run] { run(*args); });
  return {cmd, args};
}

}  // namespace dnsarena::common

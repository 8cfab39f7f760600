// SPDX-License-Identifier: GPL-3.0-or-later
// The one shape every dnsarena subcommand is registered in (app/main.cpp's command table
// calls each module's add_*_command, which calls this):
//
//   auto [cmd, args] = common::add_command<FlushRequest>(app, "flush", "help...", run_flush);
//   cmd->add_option("name", args->name, "...");
//
// The Args object lives as long as the CLI::App (shared with the callback); options bind
// to its fields; running the subcommand calls run(args). When run returns an int, it is
// the process exit status: nonzero becomes CLI::RuntimeError, which main turns back into
// that status.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace dnsarena::common {

template <class Args, class Run>
std::pair<CLI::App*, std::shared_ptr<Args>> add_command(CLI::App& parent, const char* name, const std::string& help,
                                                        Run run) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = parent.add_subcommand(name, help);
  cmd->callback([args, run] {
    if constexpr (std::is_same_v<std::invoke_result_t<Run, const Args&>, int>) {
      const int rc = run(*args);
      if (rc != 0) throw CLI::RuntimeError(rc);
    } else {
      run(*args);
    }
  });
  return {cmd, args};
}

}  // namespace dnsarena::common

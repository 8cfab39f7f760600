// A subcommand whose work returns a process exit code, for the command table (app/main.cpp).
//
// Purpose: one place where a command's exit code becomes CLI11's CLI::RuntimeError (which
// main turns back into the exit status), instead of every command repeating the callback.
// Costs: header only; the callback is one std::function call when the command runs.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace dnsarena::common {

// Adds `name` below `parent` with `help`; running it calls `run`, and a nonzero return
// ends the program with that status. Options are added to the returned App as usual.
inline CLI::App* add_exit_code_command(CLI::App& parent, const std::string& name, const std::string& help,
                                       std::function<int()> run) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  cmd->callback([run = std::move(run)] {
    const int rc = run();
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

}  // namespace dnsarena::common

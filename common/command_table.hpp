// SPDX-License-Identifier: GPL-3.0-or-later
// The command table of a dnsarena program. Both programs (app/main.cpp: `dnsarena`, the
// daemon; app/lab/main.cpp: `dnsarena-lab`, the simulator and lab benches) are one table
// of subcommands run by run_command_table; a module offers `add_<name>_command(CLI::App&
// parent)` in its commands header (registered with common::add_command), and the table
// alone decides where each command hangs and in what order `--help` lists them:
//
//   constexpr common::Command kCommands[] = {
//       {"", add_sim_group},                               // sim ...      (a group)
//       {"sim", dnsarena::sim::add_upstream_command},      // sim upstream
//   };
//   int main(int argc, char** argv) { return common::run_command_table(program, kCommands, argc, argv); }
#pragma once
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <span>
#include <string>
#include <string_view>

namespace dnsarena::common {

struct Command {
  std::string_view parent;  // "" for `<program> <name>`, else the group it hangs below
  void (*add)(CLI::App& parent);
};

// A command of the other program ("sim", "bench serve"), so that running it here says
// where it is instead of a bare parse error.
struct CommandElsewhere {
  std::string_view words;    // the command's words after the program name, space-separated
  std::string_view program;  // the program that has it
};

// What a program says about itself: its name (error messages), --help and --version.
struct ProgramInfo {
  const char* name;
  std::string description;
  std::string version;                          // printed by --version
  std::span<const CommandElsewhere> elsewhere;  // commands of the other program
};

// The entry of `elsewhere` whose words begin the arguments argv[1..], or nullptr.
inline const CommandElsewhere* command_elsewhere(std::span<const CommandElsewhere> elsewhere, int argc, char** argv) {
  for (const CommandElsewhere& c : elsewhere) {
    std::string_view rest = c.words;
    int i = 1;
    while (!rest.empty() && i < argc) {
      const std::size_t space = rest.find(' ');
      if (rest.substr(0, space) != argv[i]) break;
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
      ++i;
    }
    if (rest.empty()) return &c;
  }
  return nullptr;
}

// A group of subcommands (`sim`, the lab's `bench`): the group alone is an error that
// lists its subcommands.
inline CLI::App* add_command_group(CLI::App& parent, const char* name, const std::string& help) {
  CLI::App* group = parent.add_subcommand(name, help);
  group->require_subcommand(1);
  return group;
}

// Registers every command of `table` (a parent before its children) and runs the one the
// arguments name. Returns the process exit status: CLI11's for parse errors and --help,
// the command's for a command that fails, 1 (with "<program>: <what>") for an exception,
// 2 for a command of the other program (naming it).
inline int run_command_table(const ProgramInfo& program, std::span<const Command> table, int argc, char** argv) {
  if (const CommandElsewhere* c = command_elsewhere(program.elsewhere, argc, argv)) {
    std::cerr << program.name << ": `" << c->words << "` is a command of " << c->program << " (package "
              << c->program << "): " << c->program << " " << c->words << " ...\n";
    return 2;
  }
  CLI::App app{program.description, program.name};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", program.version);
  for (const Command& c : table) c.add(c.parent.empty() ? app : *app.get_subcommand(std::string(c.parent)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
// Finding a program installed beside the running one. dnsarena is two programs built and
// installed side by side: `dnsarena` (the daemon: serve and the operator commands) and
// `dnsarena-lab` (the simulator and the lab benches). The lab runs the daemon as a child
// (`sim validate`, `bench serve`, `bench attack`) and finds it here: in the directory of
// its own executable first (the build tree, /usr/bin of the packages, any install
// prefix), so that a lab always runs the daemon of its own build; then on PATH.
#pragma once
#include <string>

namespace dnsarena::common {

// The daemon's program name.
inline constexpr const char* kDaemonProgram = "dnsarena";

// `dir`/`name` when that file is executable, else the first executable `name` on PATH.
// Throws std::runtime_error naming `name`, `dir` and the PATH searched when neither has it.
std::string find_sibling_program(const std::string& name, const std::string& dir);

// find_sibling_program(name, the directory of the running executable).
std::string sibling_program(const std::string& name);

// The `dnsarena` daemon for the lab's children: sibling_program(kDaemonProgram).
std::string daemon_program();

}  // namespace dnsarena::common

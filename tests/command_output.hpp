// SPDX-License-Identifier: GPL-3.0-or-later
// What a shell command prints on stdout, and how it exited: the tests' one popen loop.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace dnsarena::test {

// Runs `shell_command` with /bin/sh and returns its standard output (add " 2>&1" for its
// errors too). `exit_status` (optional): its exit code, -1 when it was killed by a signal
// or could not be started.
inline std::string command_output(const std::string& shell_command, int* exit_status = nullptr) {
  std::fflush(nullptr);  // the child inherits no half-written buffers of ours
  std::string out;
  FILE* p = ::popen(shell_command.c_str(), "r");
  if (!p) {
    if (exit_status) *exit_status = -1;
    return out;
  }
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = ::pclose(p);
  if (exit_status) *exit_status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

}  // namespace dnsarena::test

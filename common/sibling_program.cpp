// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/sibling_program.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "common/child_process.hpp"
#include "common/find_program.hpp"

namespace dnsarena::common {

std::string find_sibling_program(const std::string& name, const std::string& dir) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("find_sibling_program: '" + name + "' is not a bare program name");
  const std::string beside = dir + "/" + name;
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  if (auto on_path = find_program(name)) return *on_path;
  const char* path = std::getenv("PATH");
  throw std::runtime_error(name + " not found: neither " + beside + " nor on PATH (" + (path ? path : "") +
                           "); it is built beside this program (cmake --build build --target " + name +
                           ") and installed with it (the " + name + " package)");
}

std::string sibling_program(const std::string& name) {
  const std::string self = self_executable();
  const std::size_t slash = self.rfind('/');
  return find_sibling_program(name, slash == std::string::npos ? "." : self.substr(0, slash));
}

std::string daemon_program() { return sibling_program(kDaemonProgram); }

}  // namespace dnsarena::common

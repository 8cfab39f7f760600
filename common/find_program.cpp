// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/find_program.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace dnsarena::common {

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::optional<std::string>(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> find_daemon_program(const std::string& name) {
  if (auto found = find_program(name)) return found;
  const std::string sbin = "/usr/sbin/" + name;
  return ::access(sbin.c_str(), X_OK) == 0 ? std::optional<std::string>(sbin) : std::nullopt;
}

std::string require_program(const std::string& name, const std::string& hint) {
  if (auto found = find_program(name)) return *found;
  const char* path = std::getenv("PATH");
  throw std::runtime_error(name + " not found on PATH (" + (path ? path : "") + "): " + hint);
}

}  // namespace dnsarena::common

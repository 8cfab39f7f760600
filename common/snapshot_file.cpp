// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/snapshot_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

namespace dnsarena::common {

namespace {
std::uint64_t unix_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}
}  // namespace

std::string snapshot_path(const std::string& segment, const std::string& what) {
  return "/dev/shm/." + segment + "." + what + ".json";
}

bool write_snapshot(const std::string& path, nlohmann::json body) {
  body["supervisor_pid"] = ::getpid();
  body["written_unix_ms"] = unix_ms();
  const std::string text = body.dump() + "\n";
  const std::string temp = path + "." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int e = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : e;
    ::unlink(temp.c_str());
    errno = err;
    return false;
  }
  return true;
}

std::optional<nlohmann::json> read_snapshot(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(key)) return std::nullopt;
  const std::uint64_t written = j.value("written_unix_ms", std::uint64_t{0});
  const std::uint64_t now = unix_ms();
  j["age_s"] = now > written ? static_cast<double>(now - written) / 1000.0 : 0.0;
  const long pid = j.value("supervisor_pid", 0L);
  j["supervisor_running"] = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
  return j;
}

}  // namespace dnsarena::common

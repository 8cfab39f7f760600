// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/proc_stats.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dnsarena::common {

namespace {
std::string proc_file(pid_t pid, const char* name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

double cpu_seconds(pid_t pid) {
  const std::string s = proc_file(pid, "stat");
  const auto close = s.rfind(')');
  if (close == std::string::npos || close + 2 > s.size()) return 0;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  double ticks = 0;
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && in >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::uint64_t cpu_ns(pid_t pid) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    std::uint64_t ns = 0;
    if (in >> ns) total += ns;
  }
  return total;
}

std::uint64_t status_kib(pid_t pid, const char* key) {
  std::istringstream in(proc_file(pid, "status"));
  const std::string k = std::string(key) + ":";
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(k, 0) == 0) return std::stoull(line.substr(k.size()));
  return 0;
}

unsigned open_fds(pid_t pid) {
  unsigned n = 0;
  if (DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

std::uint64_t nofile_soft_limit(pid_t pid) {
  std::istringstream in(proc_file(pid, "limits"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream s(line.substr(14));
    std::string soft;
    s >> soft;
    return soft == "unlimited" ? ~0ull : std::stoull(soft);
  }
  return 0;
}

MappingPages mapping_pages(const void* addr) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::ifstream f("/proc/self/smaps");
  std::string line;
  MappingPages m;
  bool inside = false;
  while (std::getline(f, line)) {
    // A mapping's first line: "start-end perms offset dev inode [path]" (hex addresses).
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space && line.find(':') > space) {
      if (inside) break;  // the fields of our mapping are done
      const std::uintptr_t start = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = a >= start && a < end;
      if (inside) m.size = end - start;
      continue;
    }
    if (!inside) continue;
    std::istringstream in(line);
    std::string key;
    std::uint64_t kib = 0;
    if (!(in >> key >> kib)) continue;
    if (key == "Rss:") m.resident = kib << 10;
    if (key == "AnonHugePages:" || key == "ShmemPmdMapped:" || key == "FilePmdMapped:") m.huge += kib << 10;
  }
  return m;
}

std::string shm_huge_pages_unavailable(const std::string& shmem_enabled, std::istream& mounts) {
  if (shmem_enabled.find("[force]") != std::string::npos) return "";
  if (shmem_enabled.find("[deny]") != std::string::npos)
    return "/sys/kernel/mm/transparent_hugepage/shmem_enabled is 'deny'";
  // The last mount on /dev/shm is the one a path under it reaches (it hides earlier ones).
  std::string device, dir, type, options, shm_type, shm_options;
  bool found = false;
  while (mounts >> device >> dir >> type >> options) {
    mounts.ignore(1 << 16, '\n');
    if (dir != "/dev/shm") continue;
    found = true;
    shm_type = type;
    shm_options = options;
  }
  if (!found) return "no tmpfs is mounted at /dev/shm";
  if (shm_type != "tmpfs") return "/dev/shm is a " + shm_type + " mount, not a tmpfs";
  std::istringstream words(shm_options);
  std::string huge = "huge=never";  // a tmpfs's default
  for (std::string word; std::getline(words, word, ',');)
    if (word.rfind("huge=", 0) == 0) huge = word;
  if (huge == "huge=always" || huge == "huge=within_size") return "";
  if (huge == "huge=advise")
    return "the tmpfs at /dev/shm is mounted huge=advise, which does not reach memory reserved by posix_fallocate "
           "(as root: mount -o remount,huge=within_size /dev/shm)";
  return "the tmpfs at /dev/shm is mounted without huge=within_size (as root: mount -o remount,huge=within_size "
         "/dev/shm)";
}

std::string shm_huge_pages_unavailable() {
  std::ifstream sysfs("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  std::string modes;
  std::getline(sysfs, modes);
  std::ifstream mounts("/proc/mounts");
  return shm_huge_pages_unavailable(modes, mounts);
}

}  // namespace dnsarena::common

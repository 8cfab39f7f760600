// SPDX-License-Identifier: GPL-3.0-or-later
#include "socket_owners.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dnsarena::common {

namespace {

// Whether /proc/PID/fd of `pid` (a directory name under /proc) has an fd on one of `inodes`.
bool holds_one_of(const std::string& pid, const std::set<std::string>& inodes) {
  const std::string fd_dir = "/proc/" + pid + "/fd";
  DIR* fds = ::opendir(fd_dir.c_str());
  if (fds == nullptr) return false;
  bool holds = false;
  while (dirent* e = ::readdir(fds)) {
    char target[64];
    const ssize_t n = ::readlink((fd_dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    if (n <= 9) continue;
    target[n] = '\0';
    const std::string t(target);  // "socket:[12345]"
    if (t.rfind("socket:[", 0) == 0 && inodes.count(t.substr(8, t.size() - 9)) != 0) {
      holds = true;
      break;
    }
  }
  ::closedir(fds);
  return holds;
}

}  // namespace

std::set<std::string> bound_socket_inodes(bool tcp, std::uint16_t port) {
  std::set<std::string> inodes;
  char hex_port[8];
  std::snprintf(hex_port, sizeof hex_port, ":%04X", port);
  for (const char* v : {"", "6"}) {
    std::ifstream f(std::string("/proc/net/") + (tcp ? "tcp" : "udp") + v);
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      if (!(in >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode)) continue;
      const bool listening = state == "0A";  // TCP_LISTEN
      if (local.size() > 5 && local.compare(local.size() - 5, 5, hex_port) == 0 && (!tcp || listening))
        inodes.insert(inode);
    }
  }
  return inodes;
}

std::vector<SocketHolder> socket_holders(const std::set<std::string>& inodes) {
  std::vector<SocketHolder> out;
  if (inodes.empty()) return out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const pid_t self = ::getpid();
  while (dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self || !holds_one_of(d->d_name, inodes)) continue;
    std::ifstream comm(std::string("/proc/") + d->d_name + "/comm");
    SocketHolder h;
    h.pid = static_cast<pid_t>(pid);
    std::getline(comm, h.name);
    out.push_back(std::move(h));
  }
  ::closedir(proc);
  return out;
}

std::string describe_holders(const std::vector<SocketHolder>& holders) {
  std::string out;
  for (const SocketHolder& h : holders)
    out += (out.empty() ? "" : ", ") + std::string("pid ") + std::to_string(h.pid) + " (" + h.name + ")";
  return out;
}

bool process_listens_tcp(pid_t pid, std::uint16_t port) {
  const std::set<std::string> inodes = bound_socket_inodes(true, port);
  return !inodes.empty() && holds_one_of(std::to_string(pid), inodes);
}

}  // namespace dnsarena::common

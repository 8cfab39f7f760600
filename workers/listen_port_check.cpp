#include "listen_port_check.hpp"

#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace dnsarena::workers {

namespace {

// True when binding `listen` exclusively fails with EADDRINUSE.
bool bind_refused(const Endpoint& listen, bool tcp) {
  const int fd = ::socket(listen.family(), (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;  // the real bind reports what is wrong
  const int one = 1;
  // A TCP listener's TIME_WAIT connections from an earlier run are not a server.
  if (tcp) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool refused = ::bind(fd, reinterpret_cast<const sockaddr*>(&listen.addr), listen.len) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return refused;
}

// Inodes of the sockets bound to local port `port` in /proc/net/{udp,tcp}{,6}.
std::set<std::string> socket_inodes(bool tcp, std::uint16_t port) {
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
      if (local.size() > 5 && local.compare(local.size() - 5, 5, hex_port) == 0 && (!tcp || state == "0A")) inodes.insert(inode);
    }
  }
  return inodes;
}

// "pid 812 (unbound), pid 9653 (dnsarena)" for the processes holding one of `inodes`,
// as far as /proc lets us look ("" when it does not).
std::string holders(const std::set<std::string>& inodes) {
  std::string out;
  if (inodes.empty()) return out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const pid_t self = ::getpid();
  while (dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) continue;
    const std::string fd_dir = std::string("/proc/") + d->d_name + "/fd";
    DIR* fds = ::opendir(fd_dir.c_str());
    if (fds == nullptr) continue;
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
    if (!holds) continue;
    std::ifstream comm(std::string("/proc/") + d->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    out += (out.empty() ? "" : ", ") + std::string("pid ") + d->d_name + " (" + name + ")";
  }
  ::closedir(proc);
  return out;
}

}  // namespace

std::string listen_port_taken(const Endpoint& listen, std::chrono::milliseconds grace) {
  if (listen.port() == 0) return "";  // the kernel picks a free port for each socket
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    const bool udp_taken = bind_refused(listen, false);
    const bool tcp_taken = !udp_taken && bind_refused(listen, true);
    if (!udp_taken && !tcp_taken) return "";
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string who = holders(socket_inodes(tcp_taken, listen.port()));
      return std::string(tcp_taken ? "TCP " : "UDP ") + listen.text + " is already bound by " +
             (who.empty() ? "another process" : who) +
             "; a second server on the same port would split its queries with the first (SO_REUSEPORT), so "
             "this one does not start";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace dnsarena::workers

#include "validate_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "workers/loopback.hpp"

namespace dnsarena::sim::fleet {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed for " + argv.at(0));
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // validate killed with SIGKILL: children still stop
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(cargv[0], cargv.data());
    std::perror("execv");
    ::_exit(127);
  }
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = o.pid_;
    exited_ = o.exited_;
    status_ = o.status_;
    log_path_ = std::move(o.log_path_);
    o.pid_ = -1;
  }
  return *this;
}

bool ChildProcess::running() {
  if (pid_ <= 0 || exited_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    exited_ = true;
    status_ = st;
    return false;
  }
  return true;
}

bool ChildProcess::wait_exit(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (running()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  if (wait_exit(grace)) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  exited_ = true;
  status_ = st;
}

std::string ChildProcess::exit_status() const {
  if (!exited_) return "running";
  if (WIFEXITED(status_)) return "exit code " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
  return "status " + std::to_string(status_);
}

std::string ChildProcess::log_tail(std::size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

bool accepts_tcp(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = workers::loopback_v4(port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::vector<pid_t> child_pids(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t p = 0;
  while (in >> p) out.push_back(p);
  return out;
}

Pss pss_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  Pss p;
  std::string key;
  std::uint64_t kb = 0;
  while (in >> key) {
    std::uint64_t* field = key == "Pss:"         ? &p.total
                           : key == "Pss_Anon:"  ? &p.anon
                           : key == "Pss_File:"  ? &p.file
                           : key == "Pss_Shmem:" ? &p.shmem
                                                 : nullptr;
    if (field && in >> kb) *field = kb * 1024;
    in.ignore(1 << 12, '\n');
  }
  return p;
}

std::uint64_t shm_resident_bytes(const std::string& segment_name) {
  struct stat st;
  if (::stat(("/dev/shm/" + segment_name).c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace dnsarena::sim::fleet

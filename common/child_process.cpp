// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/loopback.hpp"

namespace dnsarena::common {

namespace {

using Clock = std::chrono::steady_clock;

// In the child, before exec or the body: everything SpawnOptions asks for.
void set_up_child(const SpawnOptions& o, pid_t parent, int pipe_write_end) {
  if (o.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  }
  if (o.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
  }
  if (!o.log_path.empty()) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (o.truncate_log ? O_TRUNC : O_APPEND);
    const int fd = ::open(o.log_path.c_str(), flags, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
  }
  if (pipe_write_end >= 0) ::dup2(pipe_write_end, STDOUT_FILENO);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, SpawnOptions options)
    : log_path_(options.log_path) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (options.capture_stdout && ::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed for " + argv[0]);
  std::fflush(nullptr);  // or the child would repeat buffered output
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed for " + argv[0]);
  if (pid_ == 0) {
    set_up_child(options, parent, fds[1]);
    if (options.search_path) ::execvp(cargv[0], cargv.data());
    else ::execv(cargv[0], cargv.data());
    std::perror("exec");
    ::_exit(127);
  }
  if (options.capture_stdout) {
    ::close(fds[1]);
    out_fd_ = fds[0];
  }
}

ChildProcess ChildProcess::run(const std::function<int()>& body, unsigned alarm_seconds, int exception_code) {
  ChildProcess c;
  std::fflush(nullptr);
  c.pid_ = ::fork();
  if (c.pid_ < 0) throw std::runtime_error("fork failed");
  if (c.pid_ == 0) {
    // The parent's handlers (a test framework's, say) are not the child's: a signal ends
    // the child the default way, and its parent reads it from the exit status.
    for (const int sig : {SIGTERM, SIGINT, SIGSEGV, SIGABRT, SIGILL, SIGFPE, SIGBUS}) ::signal(sig, SIG_DFL);
    ::alarm(alarm_seconds);
    int rc = exception_code;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: exception: %s\n", static_cast<int>(::getpid()), e.what());
    } catch (...) {
    }
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return c;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    stop();
    close_stdout();
    pid_ = std::exchange(o.pid_, -1);
    exited_ = o.exited_;
    status_ = o.status_;
    out_fd_ = std::exchange(o.out_fd_, -1);
    log_path_ = std::move(o.log_path_);
  }
  return *this;
}

void ChildProcess::close_stdout() {
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = -1;
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
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

int ChildProcess::wait() {
  rusage ignored{};
  return wait(ignored);
}

int ChildProcess::wait(rusage& usage) {
  usage = rusage{};
  if (pid_ <= 0) return -1;
  if (!exited_) {
    int st = 0;
    if (::wait4(pid_, &st, 0, &usage) == pid_) {
      exited_ = true;
      status_ = st;
    }
  }
  return exit_code();
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (running()) {
    ::kill(pid_, SIGTERM);
    if (!wait_exit(grace)) kill();
  }
  close_stdout();
}

void ChildProcess::kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  exited_ = true;
  status_ = st;
}

pid_t ChildProcess::release() {
  close_stdout();
  return std::exchange(pid_, -1);
}

int ChildProcess::exit_code() const {
  if (!exited_) return -1;
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -2;
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

std::string run_and_capture(const std::vector<std::string>& argv, int& status, std::chrono::milliseconds limit) {
  ChildProcess child(argv, {.capture_stdout = true, .search_path = true});
  std::string out;
  const auto deadline = Clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{child.stdout_fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(child.stdout_fd(), buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child closed its stdout
    out.append(buf, static_cast<std::size_t>(n));
  }
  if (!child.wait_exit(std::max(std::chrono::milliseconds(0),
                                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()))))
    child.kill();
  status = child.wait_status();
  return out;
}

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<pid_t> child_pids(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t p = 0;
  while (in >> p) out.push_back(p);
  return out;
}

bool accepts_tcp(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = loopback_v4(port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace dnsarena::common

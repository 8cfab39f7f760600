#include "upstream_process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <regex>
#include <stdexcept>
#include <thread>

#include "common/find_program.hpp"
#include "workers/loopback.hpp"

namespace dnsarena::test {

namespace {

using Clock = std::chrono::steady_clock;

pid_t spawn(const std::vector<std::string>& argv, int& out_fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::perror("execvp");
    ::_exit(127);
  }
  ::close(fds[1]);
  out_fd = fds[0];
  return pid;
}

// Reads what is available within `ms`; returns false at EOF.
bool read_some(int fd, std::string& out, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) return true;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0) return false;
  out.append(buf, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

UpstreamProcess::UpstreamProcess(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {DNSARENA_BIN, "sim", "upstream", "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  pid_ = spawn(argv, out_fd_);
  std::string out;
  const std::regex listening("port ([0-9]+) \\(udp\\+tcp\\)");
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::smatch m;
  while (Clock::now() < deadline) {
    if (std::regex_search(out, m, listening)) {
      port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
      return;
    }
    if (!read_some(out_fd_, out, 100)) break;
  }
  std::string ignored;
  stop(ignored);
  throw std::runtime_error("sim upstream did not start; output: " + out);
}

UpstreamProcess::~UpstreamProcess() {
  std::string ignored;
  if (pid_ > 0) stop(ignored);
}

int UpstreamProcess::stop(std::string& output, std::chrono::milliseconds limit) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + limit;
  int status = -1;
  for (;;) {
    read_some(out_fd_, output, 10);
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      status = st;
      break;
    }
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      break;
    }
  }
  for (int i = 0; i < 100 && read_some(out_fd_, output, 10); ++i) {  // the rest of its output
  }
  ::close(out_fd_);
  out_fd_ = -1;
  pid_ = -1;
  return status;
}

sim::Bytes exchange_udp(std::uint16_t port, const sim::Bytes& query, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = workers::loopback_v4(port);
  ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  ::send(fd, query.data(), query.size(), 0);
  sim::Bytes out;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) > 0) {
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) out.assign(buf, buf + n);
  }
  ::close(fd);
  return out;
}

sim::Bytes exchange_tcp(std::uint16_t port, const sim::Bytes& query, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = workers::loopback_v4(port);
  sim::Bytes out;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return out;
  }
  sim::Bytes msg = {static_cast<std::uint8_t>(query.size() >> 8), static_cast<std::uint8_t>(query.size())};
  msg += query;
  ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
  sim::Bytes in;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
    if (in.size() >= 2 && in.size() >= 2u + ((in[0] << 8) | in[1])) {
      out = in.substr(2, (in[0] << 8) | in[1]);
      break;
    }
  }
  ::close(fd);
  return out;
}

std::string run_command(const std::vector<std::string>& argv, int& status) {
  int fd = -1;
  const pid_t pid = spawn(argv, fd);
  std::string out;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (read_some(fd, out, 100) && Clock::now() < deadline) {
  }
  ::close(fd);
  ::waitpid(pid, &status, 0);
  return out;
}

std::string kdig(std::uint16_t port, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {common::require_program("kdig", "install knot-dnsutils (.ci/install-deps)"), "@127.0.0.1", "-p", std::to_string(port)};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("+time=2");
  argv.push_back("+retry=0");
  int status = 0;
  return run_command(argv, status);
}

}  // namespace dnsarena::test

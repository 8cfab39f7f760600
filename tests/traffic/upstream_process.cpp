// SPDX-License-Identifier: GPL-3.0-or-later
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

#include "common/child_process.hpp"
#include "common/find_program.hpp"
#include "common/loopback.hpp"

namespace dnsarena::test {

namespace {

using Clock = std::chrono::steady_clock;

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
  std::vector<std::string> argv = {DNSARENA_LAB_BIN, "sim", "upstream", "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  child_ = common::ChildProcess(argv, {.capture_stdout = true});
  std::string out;
  const std::regex listening("port ([0-9]+) \\(udp\\+tcp\\)");
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::smatch m;
  while (Clock::now() < deadline) {
    if (std::regex_search(out, m, listening)) {
      port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
      return;
    }
    if (!read_some(child_.stdout_fd(), out, 100)) break;
  }
  std::string ignored;
  stop(ignored);
  throw std::runtime_error("sim upstream did not start; output: " + out);
}

UpstreamProcess::~UpstreamProcess() {
  std::string ignored;
  stop(ignored);
}

int UpstreamProcess::stop(std::string& output, std::chrono::milliseconds limit) {
  if (child_.pid() <= 0 || child_.exited()) return -1;
  ::kill(child_.pid(), SIGTERM);
  const auto deadline = Clock::now() + limit;
  int status = -1;
  for (;;) {
    read_some(child_.stdout_fd(), output, 10);
    if (!child_.running()) {
      status = child_.wait_status();
      break;
    }
    if (Clock::now() > deadline) {
      child_.kill();
      break;
    }
  }
  for (int i = 0; i < 100 && read_some(child_.stdout_fd(), output, 10); ++i) {  // the rest of its output
  }
  child_.stop();  // closes the pipe
  return status;
}

sim::Bytes exchange_udp(std::uint16_t port, const sim::Bytes& query, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = common::loopback_v4(port);
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
  const sockaddr_in a = common::loopback_v4(port);
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
  return common::run_and_capture(argv, status);
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

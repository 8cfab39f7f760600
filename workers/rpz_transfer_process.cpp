// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/rpz_transfer_process.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "workers/rpz_transfer_status.hpp"

namespace dnsarena::workers {

namespace {

// A non-blocking socket bound to `a` (listening for SOCK_STREAM). Throws naming the address.
int bound_socket(const XfrAddress& a, int type) {
  const int fd = ::socket(a.addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("policy.notify_listen " + a.text + (type == SOCK_STREAM ? " (TCP): " : " (UDP): ") + why);
  }
  return fd;
}
}  // namespace

std::unique_ptr<RpzTransferProcess> RpzTransferProcess::start(const RpzTransfers& cfg, const std::string& segment) {
  if (cfg.zones.empty()) return nullptr;
  int udp = -1, tcp = -1;
  if (cfg.notify_listen.len) {
    udp = bound_socket(cfg.notify_listen, SOCK_DGRAM);
    try {
      tcp = bound_socket(cfg.notify_listen, SOCK_STREAM);
    } catch (...) {
      ::close(udp);
      throw;
    }
  }
  std::unique_ptr<RpzTransferProcess> p(new RpzTransferProcess(cfg, segment, udp, tcp));
  p->spawn();
  return p;
}

RpzTransferProcess::RpzTransferProcess(const RpzTransfers& cfg, std::string segment, int notify_fd, int notify_tcp_fd)
    : cfg_(cfg), segment_(std::move(segment)), notify_fd_(notify_fd), notify_tcp_fd_(notify_tcp_fd) {}

RpzTransferProcess::~RpzTransferProcess() {
  stop();
  if (notify_fd_ >= 0) ::close(notify_fd_);
  if (notify_tcp_fd_ >= 0) ::close(notify_tcp_fd_);
  remove_rpz_snapshot(segment_);
}

void RpzTransferProcess::spawn() {
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Below the workers: rewriting a large zone's copy is background work that must not
    // take the CPU the answers need.
    if (::nice(10) == -1 && errno != 0) spdlog::debug("rpz transfers: nice: {}", std::strerror(errno));
    int rc = 1;
    try {
      rc = run_rpz_transfers(cfg_, segment_, notify_fd_, notify_tcp_fd_, supervisor);
    } catch (const std::exception& e) {
      spdlog::error("rpz transfers: {}", e.what());
    }
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (pid < 0) {
    spdlog::error("rpz transfers: fork: {}", std::strerror(errno));
    restart_.failed(common::monotonic_ms());
    return;
  }
  pid_ = pid;
  restart_.started(common::monotonic_ms());
  spdlog::info("rpz transfers: process pid {} for {} zones", pid, cfg_.zones.size());
}

bool RpzTransferProcess::reaped(pid_t pid, int status) {
  if (pid != pid_ || pid_ <= 0) return false;
  pid_ = 0;
  const std::uint64_t ran = restart_.died(common::monotonic_ms());
  spdlog::warn("rpz transfers (pid {}) {} after {} ms; restarting in {} ms", pid, exit_text(status), ran,
               restart_.delay_ms());
  return true;
}

void RpzTransferProcess::restart_if_due() {
  if (pid_ == 0 && restart_.due(common::monotonic_ms())) spawn();
}

std::uint64_t RpzTransferProcess::ms_until_restart() const {
  if (pid_ != 0) return HelperRestart::kMaxBackoffMs;
  return restart_.ms_until(common::monotonic_ms());
}

void RpzTransferProcess::stop() {
  stop_helper(pid_, "rpz transfers");
  pid_ = 0;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The local root refreshes forked by the supervisor (local_root_updater.hpp).
#include "workers/local_root_updater.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "workers/local_root.hpp"
#include "workers/recursion_config.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::uint64_t kNoRefresh = 1ull << 62;
constexpr std::size_t kMaxReportBytes = 16'384;  // below a pipe's buffer: the child never blocks on it

std::uint64_t refresh_wall_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

LocalRootUpdater::~LocalRootUpdater() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (report_fd_ >= 0) ::close(report_fd_);
  if (enabled_) remove_local_root_snapshot(segment_);
}

void LocalRootUpdater::configure(const RecursionConfig& c, std::shared_ptr<const dnssec::TrustAnchors> anchors) {
  const bool was_enabled = enabled_;
  enabled_ = !c.local_root_from.empty() && !c.local_root.empty();
  if (!enabled_) {
    if (was_enabled) remove_local_root_snapshot(segment_);
    return;
  }
  settings_.file = c.local_root;
  settings_.primaries = c.local_root_from;
  settings_.min_interval_s = c.local_root_refresh_min_s;
  settings_.zonemd = c.local_root_zonemd;
  settings_.anchors = std::move(anchors);
  status_.file = c.local_root;
  status_.primaries.clear();
  for (const XfrAddress& a : c.local_root_from) status_.primaries.push_back(a.text);
  if (const LocalRoot* z = c.local_root_zone.get()) {
    status_.has_copy = true;
    status_.serial = z->serial();
    if (status_.records == 0) status_.records = z->records();
  }
  write_local_root_snapshot(segment_, status_);
  due_ms_ = common::monotonic_ms();
}

std::uint64_t LocalRootUpdater::ms_until_due(std::uint64_t now_ms) const {
  if (pid_ > 0) return std::min<std::uint64_t>(1000, started_ms_ + kRefreshLimitMs > now_ms ? started_ms_ + kRefreshLimitMs - now_ms : 0);
  if (!enabled_) return kNoRefresh;
  return due_ms_ > now_ms ? due_ms_ - now_ms : 0;
}

void LocalRootUpdater::start_if_due(std::uint64_t now_ms) {
  if (pid_ > 0) {
    if (now_ms - started_ms_ > kRefreshLimitMs) {
      spdlog::warn("recursion.local_root_from: refresh pid {} still running after {} ms: killed", pid_, kRefreshLimitMs);
      ::kill(pid_, SIGKILL);
    }
    return;
  }
  if (!enabled_ || now_ms < due_ms_) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    spdlog::error("recursion.local_root_from: pipe: {}", std::strerror(errno));
    due_ms_ = now_ms + std::uint64_t{settings_.min_interval_s} * 1000;
    return;
  }
  std::fflush(nullptr);
  spdlog::default_logger()->flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(fds[0]);
    // Below the workers: printing and checking a transferred zone is background work.
    if (::nice(10) == -1 && errno != 0) spdlog::debug("local root refresh: nice: {}", std::strerror(errno));
    refresh_and_report(fds[1]);
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  if (pid < 0) {
    spdlog::error("recursion.local_root_from: fork: {}", std::strerror(errno));
    ::close(fds[0]);
    due_ms_ = now_ms + std::uint64_t{settings_.min_interval_s} * 1000;
    return;
  }
  pid_ = pid;
  report_fd_ = fds[0];
  started_ms_ = now_ms;
}

void LocalRootUpdater::refresh_and_report(int fd) const {
  const LocalRootRefreshReport r = refresh_local_root(settings_, static_cast<std::int64_t>(std::time(nullptr)));
  std::string text = report_json(r).dump();
  if (text.size() > kMaxReportBytes) {  // 32 primaries' reasons at most: cut the reasons, not the report
    LocalRootRefreshReport cut = r;
    cut.error.resize(kMaxReportBytes / 2);
    text = report_json(cut).dump();
  }
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

LocalRootRefreshReport LocalRootUpdater::read_report(int status) {
  std::string text;
  char buf[4096];
  for (;;) {  // the writer has exited: read() ends at EOF, never waits
    const ssize_t n = ::read(report_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() > kMaxReportBytes) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(report_fd_);
  report_fd_ = -1;
  LocalRootRefreshReport r;
  try {
    r = report_from_json(nlohmann::json::parse(text));
  } catch (const std::exception&) {
    r.outcome = LocalRootOutcome::failed;
    r.has_copy = status_.has_copy;
    r.serial = status_.serial;
    r.error = WIFSIGNALED(status) ? "the refresh process was killed by signal " + std::to_string(WTERMSIG(status))
                                  : "the refresh process ended without a report";
    r.next_unix_s = static_cast<std::int64_t>(std::time(nullptr)) + settings_.min_interval_s;
  }
  return r;
}

bool LocalRootUpdater::reaped(pid_t pid, int status, const RecursionConfig& running,
                              std::shared_ptr<const LocalRoot>& install) {
  install.reset();
  if (pid_ <= 0 || pid != pid_) return false;
  pid_ = 0;
  const LocalRootRefreshReport r = read_report(status);
  const auto now_s = static_cast<std::int64_t>(std::time(nullptr));
  status_.record(r, refresh_wall_ms());
  const std::uint64_t now_ms = common::monotonic_ms();
  due_ms_ = now_ms + static_cast<std::uint64_t>(std::max<std::int64_t>(r.next_unix_s - now_s, 1)) * 1000;
  switch (r.outcome) {
    case LocalRootOutcome::not_due: break;
    case LocalRootOutcome::unchanged:
      spdlog::info("recursion.local_root_from: {} has serial {}, as {}: copy refreshed", r.primary, r.serial, settings_.file);
      break;
    case LocalRootOutcome::installed:
      spdlog::info("recursion.local_root_from: serial {} ({} records) from {} written to {}", r.serial, r.records,
                   r.primary, settings_.file);
      break;
    case LocalRootOutcome::failed:
      spdlog::warn("recursion.local_root_from: refresh failed, {} unchanged, next attempt in {} s: {}", settings_.file,
                   r.next_unix_s - now_s, r.error);
      break;
  }
  if (!enabled_) return true;  // a reload took local_root_from away while it ran: nothing more to do
  const LocalRoot* current = running.local_root_zone.get();
  const bool load = r.outcome == LocalRootOutcome::installed ||
                    (r.has_copy && r.outcome != LocalRootOutcome::failed && current == nullptr) ||
                    (r.outcome == LocalRootOutcome::unchanged && current != nullptr &&
                     current->expires_at() - now_s < static_cast<std::int64_t>(r.expire_s / 2));
  if (load) {
    try {
      install = LocalRoot::load(settings_.file, settings_.zonemd, settings_.anchors.get());
      status_.has_copy = true;
      status_.serial = install->serial();
      status_.records = install->records();
    } catch (const std::exception& e) {
      spdlog::error("recursion.local_root_from: {}; the workers keep the running copy", e.what());
    }
  }
  write_local_root_snapshot(segment_, status_);
  return true;
}

}  // namespace dnsarena::workers

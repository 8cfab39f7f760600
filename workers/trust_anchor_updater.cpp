// SPDX-License-Identifier: GPL-3.0-or-later
// RFC 5011 probes forked by the supervisor (trust_anchor_updater.hpp).
#include "workers/trust_anchor_updater.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "dns/blocking_exchange.hpp"
#include "dns/query_builder.hpp"
#include "dnssec/autotrust.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::chrono::milliseconds kAttemptTimeout{2000};
constexpr std::uint64_t kNever = 1ull << 62;

std::vector<common::Bytes> sorted_trusted(const dnssec::TrustPoint& tp) {
  std::vector<common::Bytes> keys = dnssec::trusted_keys(tp);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

TrustAnchorUpdater::~TrustAnchorUpdater() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void TrustAnchorUpdater::configure(const ServeConfig& cfg) {
  enabled_ = cfg.dnssec.auto_update && !cfg.dnssec.trust_anchor_file.empty();
  if (!enabled_) return;
  file_ = cfg.dnssec.trust_anchor_file;
  min_interval_s_ = cfg.dnssec.auto_update_min_interval_s;
  hold_down_s_ = cfg.dnssec.auto_update_hold_down_s;
  limits_ = cfg.dnssec.limits;
  servers_ = cfg.upstreams;
  try {
    const dnssec::TrustPoint tp = dnssec::read_trust_point(file_);
    std::size_t deepest = 0;  // the forward zone closest to the trust point's zone serves it
    for (const ForwardZone& z : cfg.forward_zones)
      if (z.contains(tp.zone.data()) && z.name.size() > deepest) {
        deepest = z.name.size();
        servers_ = z.upstreams;
      }
  } catch (const std::exception& e) {
    spdlog::warn("dnssec.auto_update: {}", e.what());  // the probe will say so again, counted
  }
  due_ms_ = next_due_from_file(common::monotonic_ms());
}

std::uint64_t TrustAnchorUpdater::next_due_from_file(std::uint64_t now_ms) const {
  try {
    const dnssec::TrustPoint tp = dnssec::read_trust_point(file_);
    const auto now_s = static_cast<std::uint32_t>(std::time(nullptr));
    if (tp.next_probe == 0 || static_cast<std::int32_t>(tp.next_probe - now_s) <= 0) return now_ms;
    return now_ms + std::uint64_t{tp.next_probe - now_s} * 1000;
  } catch (const std::exception&) {
    return now_ms + std::uint64_t{min_interval_s_} * 1000;
  }
}

std::uint64_t TrustAnchorUpdater::ms_until_due(std::uint64_t now_ms) const {
  if (pid_ > 0) return std::min<std::uint64_t>(1000, started_ms_ + kProbeLimitMs > now_ms ? started_ms_ + kProbeLimitMs - now_ms : 0);
  if (!enabled_) return kNever;
  return due_ms_ > now_ms ? due_ms_ - now_ms : 0;
}

void TrustAnchorUpdater::start_if_due(std::uint64_t now_ms) {
  if (pid_ > 0) {
    if (now_ms - started_ms_ > kProbeLimitMs) {
      spdlog::warn("dnssec.auto_update: probe pid {} still running after {} ms: killed", pid_, kProbeLimitMs);
      ::kill(pid_, SIGKILL);
    }
    return;
  }
  if (!enabled_ || now_ms < due_ms_) return;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int rc = kExitFileError;
    try {
      rc = probe();
    } catch (const std::exception& e) {
      spdlog::error("dnssec.auto_update: {}", e.what());
    }
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (pid < 0) {
    spdlog::error("dnssec.auto_update: fork: {}", std::strerror(errno));
    due_ms_ = now_ms + std::uint64_t{min_interval_s_} * 1000;
    return;
  }
  pid_ = pid;
  started_ms_ = now_ms;
}

bool TrustAnchorUpdater::reaped(pid_t pid, int status, bool& trusted_changed) {
  trusted_changed = false;
  if (pid_ <= 0 || pid != pid_) return false;
  pid_ = 0;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == kExitChanged) {
    trusted_changed = true;  // logged by reload_trust_anchors
  } else if (code != kExitSame) {
    stats_.count(cache::Counter::trust_anchor_probe_failures);
    if (code < 0) spdlog::warn("dnssec.auto_update: the probe process died (signal {})", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  const std::uint64_t now_ms = common::monotonic_ms();
  due_ms_ = enabled_ ? std::max(next_due_from_file(now_ms), now_ms + std::uint64_t{1000}) : kNever;
  if (code < 0 || code == kExitFileError) due_ms_ = now_ms + std::uint64_t{min_interval_s_} * 1000;
  return true;
}

int TrustAnchorUpdater::probe() const {
  dnssec::TrustPoint tp;
  try {
    tp = dnssec::read_trust_point(file_);
  } catch (const std::exception& e) {
    spdlog::error("dnssec.auto_update: {}; no probe", e.what());
    return kExitFileError;
  }
  const std::vector<common::Bytes> before = sorted_trusted(tp);
  const auto now = static_cast<std::uint32_t>(std::time(nullptr));
  std::uint16_t id = 0;
  ::arc4random_buf(&id, sizeof id);
  const common::Bytes zone = tp.zone;  // outlives the spec, which points at it
  dns::QuerySpec q;
  q.id = id;
  q.qname = zone;
  q.qtype = dnssec::kTypeDnskey;
  q.cd = true;
  q.do_bit = true;
  const common::Bytes query = dns::build_query(q);
  dnssec::AutotrustLimits hold;
  hold.add_hold_down_s = hold.remove_hold_down_s = hold_down_s_;
  hold.min_interval_s = min_interval_s_;
  dnssec::ProbeReport report;
  std::string why = "no server to ask";
  bool answered = false;
  for (const Endpoint& server : servers_) {
    const dns::Exchange x = dns::exchange_blocking(server.addr, server.len, query, kAttemptTimeout);
    if (x.reply.empty()) {
      why = server.text + ": " + x.error;
      continue;
    }
    dnssec::Response r;
    std::string error;
    if (!dnssec::parse_response(x.reply, r, error)) {
      why = server.text + ": the reply does not parse: " + error;
      continue;
    }
    report = dnssec::observe(tp, r, now, limits_, hold);
    if (!report.accepted) why = server.text + ": the DNSKEY set does not verify with a trusted key: " + std::string(report.outcome.why);
    answered = true;
    break;
  }
  if (!answered) report = dnssec::observe_failure(tp, now, "no reply", min_interval_s_);
  try {
    dnssec::write_file_atomically(file_, dnssec::format_trust_point(tp));
  } catch (const std::exception& e) {
    spdlog::error("dnssec.auto_update: {}", e.what());
    return kExitFileError;
  }
  const std::string zone_text = dnssec::name_text(tp.zone);
  for (const std::string& c : report.changes) spdlog::info("dnssec.auto_update: {}: {}", zone_text, c);
  if (!report.accepted) {
    spdlog::warn("dnssec.auto_update: probe of {} DNSKEY failed: {}; trust anchors unchanged, next probe in {} s",
                 zone_text, why, report.next_probe - now);
    return kExitFailed;
  }
  const bool changed = sorted_trusted(tp) != before;
  spdlog::info("dnssec.auto_update: {} DNSKEY verified; trusted keys {}; next probe in {} s", zone_text,
               changed ? "changed" : "unchanged", report.next_probe - now);
  return changed ? kExitChanged : kExitSame;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// RFC 5011 trust anchor updates inside serve (dnssec.auto_update, dnssec_config.hpp): the
// supervisor's timer for the probes of the trust point, and the probe itself.
//
// When: the first probe at start, or at the file's next_probe_time when that is later
// (a restart does not probe early); then at the interval the probe set in the file
// (RFC 5011 2.3: MAX(1 h, MIN(15 days, 1/2 the DNSKEY set's original TTL, 1/2 the time
// to its RRSIGs' expiry)); after a failure MAX(1 h, MIN(1 day, 1/10 ...)); the 1 h is
// dnssec.auto_update_min_interval_s), dnssec/autotrust.hpp computing it.
//
// How: the supervisor forks one short-lived process per probe, so its own loop (signals,
// heartbeats, restarts) never waits on the network. That process reads the trust point
// file, asks the servers that serve the trust point's zone (the forward zone that holds
// it, else `upstreams`), in order until one replies, for its DNSKEY set with DO and CD
// (UDP, then TCP on TC: dns/blocking_exchange.hpp, 2 s per attempt), applies RFC 5011
// (autotrust.hpp's observe, with the configured hold-downs) and writes the file back
// atomically, as `dnsarena dnssec update-trust` does; its exit code says what happened.
// A probe that runs longer than kProbeLimitMs is killed (counted as failed).
//
// Then, in the supervisor (reaped): a failed probe (no reply, a set no trusted key
// signed, a file that cannot be read or written) is logged and counted
// (trust_anchor_probe_failures) and changes no anchor; a probe whose trusted key set
// changed (a key became valid, or was revoked or removed) makes the supervisor read the
// anchors again and replace the workers as a reload does (logged: "trusted keys of FILE
// changed") (supervisor.hpp), so they validate with the new keys.
//
// Bounds: one probe process at a time; at most one probe per min_interval_s (1 .. 3600 s).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

class TrustAnchorUpdater {
public:
  static constexpr std::uint64_t kProbeLimitMs = 30'000;

  // `stats`: the supervisor's cache, whose stat slot counts the probes.
  explicit TrustAnchorUpdater(cache::Cache& stats) : stats_(stats) {}
  ~TrustAnchorUpdater();
  TrustAnchorUpdater(const TrustAnchorUpdater&) = delete;
  TrustAnchorUpdater& operator=(const TrustAnchorUpdater&) = delete;

  // Takes cfg's settings (at start and after each reload); a probe running goes on.
  // The next probe is due at the file's next_probe_time, or now.
  void configure(const ServeConfig& cfg);
  // Milliseconds until start_if_due has something to do (a large value when off).
  std::uint64_t ms_until_due(std::uint64_t now_ms) const;
  // Forks the probe when due and none runs; kills one that ran past kProbeLimitMs.
  void start_if_due(std::uint64_t now_ms);
  // True when `pid` was the probe process. `trusted_changed`: the anchors need reading again.
  bool reaped(pid_t pid, int status, bool& trusted_changed);

private:
  // Exit codes of the probe process.
  static constexpr int kExitSame = 0, kExitChanged = 10, kExitFailed = 11, kExitFileError = 12;
  // The probe, in the forked process: its exit code.
  int probe() const;
  // When the file says the next probe is due (monotonic ms), or now + the floor.
  std::uint64_t next_due_from_file(std::uint64_t now_ms) const;

  cache::Cache& stats_;
  bool enabled_ = false;
  std::string file_;
  std::vector<Endpoint> servers_;
  std::uint32_t min_interval_s_ = 3600;
  std::uint32_t hold_down_s_ = 30 * 86400;
  dnssec::Limits limits_;
  pid_t pid_ = 0;
  std::uint64_t started_ms_ = 0;
  std::uint64_t due_ms_ = 0;
};

}  // namespace dnsarena::workers

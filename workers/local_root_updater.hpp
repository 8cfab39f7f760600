// SPDX-License-Identifier: GPL-3.0-or-later
// The local root copy kept fresh by zone transfer inside serve (recursion.local_root_from,
// RFC 8806 section 2): the supervisor's timer for the refreshes, the process that does
// one (local_root_refresh.hpp), and what the supervisor makes of its report.
//
// When: a refresh at start and after each reload (it finds nothing to do when the file's
// SOA refresh has not passed since the file was written or last refreshed), then when
// the last one said: the SOA's refresh after a success, its retry after a failure,
// bounded to local_root_refresh_min_s .. 1 day.
//
// How: as the RFC 5011 probes (trust_anchor_updater.hpp), one short-lived process per
// refresh, forked by the supervisor at nice 10 with PR_SET_PDEATHSIG, so the
// supervisor's loop (signals, heartbeats, restarts) never waits on the network and a
// transfer's memory goes with the process. It sends its report (local_root_status.hpp,
// report_json) to the supervisor over a pipe and exits. One that runs past
// kRefreshLimitMs is killed (a failure); at most one runs at a time.
// NOTE: RpzTransferProcess (a long-lived process with NOTIFY sockets and a zone copy to
// apply IXFR deltas to) was not generalised for this: the root needs none of that (RFC
// 8806 asks only for a fresh copy; AXFR when the serial moved), and a process per
// refresh holds no state to restart.
//
// Then, in the supervisor (reaped): a copy that changed (installed), or a running copy
// that has used half its SOA expire (the file was refreshed, so a load counts its age
// again from now), or none running while the file holds one, is loaded
// (LocalRoot::load) and handed to the workers: they are replaced as a reload does, and
// nothing else of the config is read again. A copy the supervisor cannot load keeps the
// running one (logged). Every report is logged (failures as warnings) and kept for
// `dnsarena stats` (local_root_status.hpp).
//
// Costs (CPU time, tests/interop/local_root_refresh_test.cpp "[perf]", a root-sized zone
// of 21,000 records, 1 MB of text): the refresh process 66-80 ms for a transfer and
// 2-6 ms for an unchanged serial; the supervisor's load of a new copy 40-55 ms of its
// loop, once per new serial (the root's changes about twice a day).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "workers/local_root_refresh.hpp"
#include "workers/local_root_status.hpp"

namespace dnsarena::workers {

class LocalRoot;
struct RecursionConfig;

class LocalRootUpdater {
public:
  static constexpr std::uint64_t kRefreshLimitMs = 300'000;

  // `segment`: where the status snapshot goes (local_root_status.hpp).
  explicit LocalRootUpdater(std::string segment) : segment_(std::move(segment)) {}
  // Kills a refresh that runs and removes the snapshot.
  ~LocalRootUpdater();
  LocalRootUpdater(const LocalRootUpdater&) = delete;
  LocalRootUpdater& operator=(const LocalRootUpdater&) = delete;

  // Takes the config's settings (at start and after each reload; off without
  // local_root_from), and the trust anchors a copy's ZONEMD signature is validated from
  // (local_root_zonemd.hpp; after each reload and RFC 5011 update); a refresh is due now.
  // One running goes on.
  void configure(const RecursionConfig& c, std::shared_ptr<const dnssec::TrustAnchors> anchors = nullptr);
  // Milliseconds until start_if_due has something to do (a large value when off).
  std::uint64_t ms_until_due(std::uint64_t now_ms) const;
  // Forks the refresh when due and none runs; kills one that ran past kRefreshLimitMs.
  void start_if_due(std::uint64_t now_ms);
  // True when `pid` was the refresh process. `install`: the copy the workers are to get
  // (see the header comment), else left empty. `running`: the config the workers have.
  bool reaped(pid_t pid, int status, const RecursionConfig& running, std::shared_ptr<const LocalRoot>& install);

private:
  // In the forked process: the refresh, its report written to `fd`.
  void refresh_and_report(int fd) const;
  // Reads the refresh's report from report_fd_ (closed); a failed report when none.
  LocalRootRefreshReport read_report(int status);

  std::string segment_;
  LocalRootRefreshSettings settings_;
  bool enabled_ = false;
  LocalRootStatus status_;
  pid_t pid_ = 0;
  int report_fd_ = -1;
  std::uint64_t started_ms_ = 0, due_ms_ = 0;
};

}  // namespace dnsarena::workers

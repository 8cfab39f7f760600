// SPDX-License-Identifier: GPL-3.0-or-later
// The serve supervisor: owns the segment's lifetime and the worker processes.
//
// Start: Segment::open (create, or re-attach a warm segment of the same format and
// geometry; a segment of an older format or another geometry is migrated warm and the
// migration logged in one line (cache/segment_migration.hpp); one that cannot be read
// is refused with the reason unless cache.reset_on_mismatch), open
// the listening sockets and keep them (per listen address: one UDP socket per worker
// index in one SO_REUSEPORT group, one TCP listener), fork N workers on them
// (worker.hpp), start /metrics (metrics_process.hpp: a process of its own, forked
// first, so the supervisor never runs a thread) when configured, and map the
// workers' shared tables of upstream queries in flight per name (in_flight_names.hpp)
// and of upstream health (upstream_health.hpp) before the first fork. Because the sockets are ours, a worker
// that dies takes no queue with it: its replacement reads the same socket. The health
// table is kept for the service's life (a restarted or reloaded worker finds what its
// predecessors learned), gets rows for a reload's new upstreams before its workers are
// forked, and is published once a second for `dnsarena stats` (upstream_snapshot.hpp).
// Run: signals are blocked and taken synchronously (sigtimedwait), so there is no
// handler race. A worker that dies is logged (exit code or signal), its restart counted
// in its stat slot, and it is forked again after a backoff that doubles from
// backoff_initial_ms to backoff_max_ms and resets once a worker has run for 10 s. A
// worker that exits with kWorkerExitConfig (cannot bind or attach) stops the service.
// Heartbeats: each worker writes a byte to its pipe every kHeartbeatMs from its event
// loop; one silent for restart.heartbeat_timeout_ms (default 2000; 0 = off) is stopped
// (SIGSTOP, a debugger, a cgroup freezer) or hung, possibly holding the cache's writer
// lock: it is SIGKILLed (the robust lock then passes on), counted
// (workers_killed_silent) and replaced at once, and the queries queued on its socket
// are answered by the replacement.
// Reload (SIGHUP): the supervisor re-reads the config (SupervisorOptions::reload_config:
// the file plus the command line's flags, as at start) and validates it; a bad file is
// logged with the reason and the running config stays. A good one replaces the workers
// one by one, each new worker forked on the same socket before the old one is retired
// (it drains its TCP and DoT connections, then exits: worker.hpp, kRetireSignal), so
// the cache stays warm, no socket goes unread and no established connection is dropped
// (supervisor.cpp, reload_workers, says why not an in-place reload). The reload is
// logged and reported READY only once every retired worker has stopped reading its
// sockets, or 2 s passed (retirement_wait.hpp). DoT's certificate
// and key are read again (a pair that fails keeps the running one, logged); its session
// ticket key is kept, so tickets stay valid. Settings the supervisor holds for
// the service's life (listen, workers, segment and geometry, /metrics, socket buffers)
// and tls.listen keep their running values, with a warning.
// A changed RPZ file (policy.watch_interval_ms, policy/zone_file_watch.hpp) compiles the
// running config's policy again and replaces the workers the same way; one that does not
// compile keeps the running policy. So does kRpzTransferSignal, sent by the RPZ transfer
// process (rpz_transfer_process.hpp: forked after the workers when a policy.rpz zone
// comes by zone transfer, forked again when it dies, stopped first) once a transfer
// rewrote a zone's file.
// systemd: READY/RELOADING/STOPPING and watchdog pings (service_notify.hpp).
// Stop (SIGTERM/SIGINT): SIGTERM to every worker, SIGKILL after 5 s, wait for all;
// the segment stays for the next start unless remove_segment.
//
// The supervisor runs no thread: it forks for its whole life (workers restarted or
// replaced, the RFC 5011 probe, the local root refresh, the RPZ transfer process), and a
// fork beside a running thread copies every lock that thread holds as held for good.
// /metrics, which serves on cpp-httplib's threads, runs in a process of its own
// (metrics_process.hpp), forked before anything else.
#pragma once
#include <functional>

#include "workers/serve_config.hpp"

namespace dnsarena::workers {

struct SupervisorOptions {
  bool remove_segment = false;  // remove the segment on clean shutdown
  // SIGHUP: returns the new config or throws saying what is wrong (empty: SIGHUP only
  // logs that there is nothing to reload).
  std::function<ServeConfig()> reload_config;
};

// Runs until SIGTERM/SIGINT. Returns the process exit code.
int run_supervisor(const ServeConfig& config, const SupervisorOptions& options);

}  // namespace dnsarena::workers

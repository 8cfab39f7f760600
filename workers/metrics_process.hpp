// SPDX-License-Identifier: GPL-3.0-or-later
// /metrics (metrics_server.hpp) served by a process of its own, forked by the supervisor.
//
// Why a process: cpp-httplib serves on threads, and a process that runs threads cannot
// fork safely: the child gets every lock another thread held at that moment, held for
// good (the sanitizers' allocator, a logger's mutex). The supervisor forks for its whole
// life (workers restarted or replaced by a reload, the RFC 5011 probe, the local root
// refresh), so it runs no thread at all; the HTTP threads live here.
//
// What it reads is all shared with the supervisor: the segment's stat slots, the upstream
// health table, the answer metrics and the miss-ratio curves (anonymous shared mappings
// made before it is forked, never replaced by a reload) and the RPZ snapshot file, so its
// answers are the ones the supervisor would give. metrics_listen cannot change on a reload
// (supervisor.cpp keeps the running one).
//
// Life: the constructor forks it and waits (at most kStartTimeoutMs) for its word that it
// bound the port, or throws std::runtime_error with its reason: a start whose /metrics
// cannot bind fails as before. It ends on SIGTERM (the destructor: SIGTERM, then SIGKILL
// after 5 s) or with the supervisor (PR_SET_PDEATHSIG). When it dies otherwise, reaped()
// schedules it again after a backoff (helper_process.hpp: 1 s doubling to 30 s), as for
// the RPZ transfer process.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "cache/segment.hpp"
#include "workers/answer_metrics.hpp"
#include "workers/helper_process.hpp"
#include "workers/miss_ratio_curves.hpp"
#include "workers/serve_config.hpp"
#include "workers/upstream_health.hpp"

namespace dnsarena::workers {

// Its name (/proc/PID/comm, ps): the supervisor's children that are not workers can be told apart.
inline constexpr const char* kMetricsProcessName = "dnsarena-metric";  // comm holds 15 characters

class MetricsProcess {
public:
  static constexpr unsigned kStartTimeoutMs = 10'000;

  // Forks the process serving /metrics on `listen`; returns once it serves. Throws
  // std::runtime_error (the port cannot be bound, the fork failed, no word in time).
  MetricsProcess(cache::Segment& segment, Endpoint listen, const UpstreamHealth* health, const AnswerMetrics* answers,
                 const MissRatioCurves* curves);
  ~MetricsProcess();
  MetricsProcess(const MetricsProcess&) = delete;
  MetricsProcess& operator=(const MetricsProcess&) = delete;

  // `pid` ended with `status`: true when it was this process (then forked again later).
  bool reaped(pid_t pid, int status);
  // Forks it again when it is down and its backoff has passed (a failure is logged).
  void restart_if_due();
  std::uint64_t ms_until_restart() const;
  pid_t pid() const { return pid_; }

private:
  // Forks the process and waits for its word: "" once it serves, else why not.
  std::string spawn();

  cache::Segment& segment_;
  Endpoint listen_;
  const UpstreamHealth* health_;
  const AnswerMetrics* answers_;
  const MissRatioCurves* curves_;
  pid_t pid_ = 0;
  HelperRestart restart_;
};

}  // namespace dnsarena::workers

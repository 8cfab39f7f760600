// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena serve` as a child process of a benchmark: the one way `bench attack` and
// `bench outage` start, observe and stop the real service.
//
// A ServeProcess is serve on a free loopback port with a private segment
// ("<segment_prefix>-<pid>-<tag>", created fresh and removed by serve at exit, and again by
// the destructor in case serve was killed), its output in DIR/serve-TAG.log. The
// constructor returns once serve accepts TCP and its workers had 200 ms to attach; it
// throws ServeStartError (with serve's log) when serve exits or does not listen within 10 s.
// The destructor stops serve (SIGTERM, SIGKILL after 5 s): every path cleans up.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/child_process.hpp"

namespace dnsarena::bench {

// The whole text of a file ("" when it cannot be read).
std::string slurp(const std::string& path);
// fork + exec (PATH searched) with stdout and stderr to `log`, optionally pinned to one CPU.
common::ChildProcess spawn_logged(const std::vector<std::string>& argv, const std::string& log, int cpu = -1);
// Until something accepts TCP on 127.0.0.1:`port` (up to `timeout_ms`); false when `child`
// exits first or the time runs out.
bool wait_tcp(std::uint16_t port, common::ChildProcess& child, int timeout_ms = 10'000);
// Until a DNS query over UDP to 127.0.0.1:`port` gets any answer (asked every 50 ms, up to
// `timeout_ms`): a server that accepts TCP may still be reading its config (the kernel
// completes handshakes on a listening socket before the program runs its loop).
bool wait_udp_answer(std::uint16_t port, common::ChildProcess& child, int timeout_ms);

struct ServeSpec {
  std::string binary;          // the dnsarena program that has `serve` and `stats`
  std::string dir;             // scratch directory for the log
  std::string tag;             // names the log and the segment
  std::string segment_prefix = "dnsarena-bench";
  unsigned workers = 2;
  std::uint64_t max_entries = 200000;
  std::string arena = "64M";
  std::vector<std::string> args;  // more flags: --upstream, --forward-zone, -c FILE, ...
};

struct ServeStartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ServeProcess {
public:
  explicit ServeProcess(const ServeSpec& spec);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  std::uint16_t port() const { return port_; }
  const std::string& segment() const { return segment_; }
  const std::string& log() const { return log_; }
  const std::vector<pid_t>& workers() const { return workers_; }
  // `dnsarena stats --json` of the segment (entries, bytes per entry, per-worker rows), or
  // {} when it cannot be read.
  nlohmann::json stats() const;
  // The service's counters summed over its workers (stats()'s "total"), or {}.
  nlohmann::json totals() const;
  // utime + stime of the workers so far, in seconds.
  double workers_cpu() const;

private:
  std::uint16_t port_;
  std::string segment_;
  std::string log_;
  std::string binary_;
  common::ChildProcess child_;
  std::vector<pid_t> workers_;
};

}  // namespace dnsarena::bench

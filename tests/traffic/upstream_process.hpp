// SPDX-License-Identifier: GPL-3.0-or-later
// Test support: `dnsarena-lab sim upstream` as a child process on a free loopback port,
// a one-shot UDP/TCP DNS exchange, and running a command (kdig) for its output.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/child_process.hpp"
#include "sim/workload/entry_generator.hpp"

namespace dnsarena::test {

class UpstreamProcess {
public:
  // Starts `dnsarena-lab sim upstream --port 0 <extra>` and waits (up to 20 s) for its
  // "listening on ... port N" line. Throws std::runtime_error on failure.
  explicit UpstreamProcess(const std::vector<std::string>& extra_args = {});
  // Stops the child (SIGTERM, then SIGKILL after 5 s) if still running.
  ~UpstreamProcess();
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return child_.pid(); }
  // SIGTERM and wait up to `limit`; returns the exit status (as from waitpid), and
  // the child's remaining stdout in `output`. -1 when it had to be killed.
  int stop(std::string& output, std::chrono::milliseconds limit = std::chrono::seconds(5));

private:
  common::ChildProcess child_;  // stdout captured: the port is read from it
  std::uint16_t port_ = 0;
};

// Sends `query` to 127.0.0.1:port over UDP (or TCP) and returns the response; empty on
// timeout.
sim::Bytes exchange_udp(std::uint16_t port, const sim::Bytes& query, int timeout_ms = 2000);
sim::Bytes exchange_tcp(std::uint16_t port, const sim::Bytes& query, int timeout_ms = 2000);

// Runs argv (no shell) and returns its stdout; `status` gets the exit status.
std::string run_command(const std::vector<std::string>& argv, int& status);

// `kdig @127.0.0.1 -p port <args...> +time=2 +retry=0`.
std::string kdig(std::uint16_t port, const std::vector<std::string>& args);

}  // namespace dnsarena::test

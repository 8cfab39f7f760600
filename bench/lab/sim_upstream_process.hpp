// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim upstream` (the synthetic authoritative) as a child process of a benchmark,
// with its black-hole switch: set_silent(true) sends SIGUSR1 (every query read and
// dropped), set_silent(false) SIGUSR2, each returning once the upstream's stats file
// shows the new state. Counters come from that file (rewritten every 200 ms when they
// change). The process listens on a free loopback port, logs to DIR/upstream-TAG.log and
// is stopped by the destructor.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/child_process.hpp"

namespace dnsarena::bench {

struct SimUpstreamSpec {
  std::string binary;        // the program that has `sim upstream`
  std::string dir;           // scratch directory: log and stats file
  std::string tag;
  std::string profile_path;  // traffic profile YAML (names, TTLs); empty: the embedded one
  std::uint64_t seed = 1;
  unsigned delay_ms = 0;     // every answer this late (a round-trip time)
  bool silent = false;       // start as a black hole
};

class SimUpstreamProcess {
public:
  // Throws std::runtime_error (with the log) when it does not listen within 10 s.
  explicit SimUpstreamProcess(const SimUpstreamSpec& spec);
  SimUpstreamProcess(const SimUpstreamProcess&) = delete;
  SimUpstreamProcess& operator=(const SimUpstreamProcess&) = delete;

  std::uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Flips the black-hole switch and waits (up to 5 s) until the stats file says so;
  // throws std::runtime_error when it does not.
  void set_silent(bool silent);
  // The counters of the stats file as last written ({} before the first write).
  nlohmann::json stats() const;
  // The counters once every message read so far is in the file: 400 ms later (two
  // rewrite periods), then read.
  nlohmann::json settled_stats() const;
  // One counter of settled_stats() (0 when absent).
  std::uint64_t settled(const char* counter) const;

private:
  std::uint16_t port_;
  std::string stats_path_;
  std::string log_;
  common::ChildProcess child_;
};

}  // namespace dnsarena::bench

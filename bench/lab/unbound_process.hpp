// SPDX-License-Identifier: GPL-3.0-or-later
// Unbound as a child process of a benchmark: a forwarding cache (or, given root hints, a
// recursive resolver) on a free loopback port,
// configured from an UnboundSpec, with its counters read through unbound-control over a
// Unix socket (no certificates). Config in DIR/unbound-TAG.conf, output in
// DIR/unbound-TAG.log; the destructor stops it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/child_process.hpp"

namespace dnsarena::bench {

struct UnboundSpec {
  std::string dir;
  std::string tag;
  unsigned threads = 2;
  std::vector<std::string> forward_addrs;  // "127.0.0.1@5300", in this order, for "."
  std::string root_hints;  // a root hints file: resolve from the root (forward_addrs unused)
  std::vector<std::string> server_lines;   // more "key: value" lines of the server: clause
};

// True when `unbound` and `unbound-control` are on PATH (or in /usr/sbin).
bool unbound_installed();
// "1.17.1" (from `unbound -V`), or "" when it cannot be run.
std::string unbound_version();

class UnboundProcess {
public:
  // Throws std::runtime_error with its log when it does not listen within 10 s.
  explicit UnboundProcess(const UnboundSpec& spec);
  UnboundProcess(const UnboundProcess&) = delete;
  UnboundProcess& operator=(const UnboundProcess&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return child_.pid(); }
  const std::string& config_text() const { return config_; }
  // `unbound-control stats_noreset` as {"total.num.queries": 12, ...} (numbers only), {}
  // when it cannot be read.
  nlohmann::json counters() const;

private:
  std::uint16_t port_;
  std::string conf_path_;
  std::string log_;
  std::string config_;
  common::ChildProcess child_;
};

}  // namespace dnsarena::bench

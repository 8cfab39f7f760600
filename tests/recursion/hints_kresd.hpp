// SPDX-License-Identifier: GPL-3.0-or-later
// Knot Resolver resolving from the lab hierarchy's root hints (kresd_config.hpp with
// root_hints): one kresd on a free port, its config, cache and log in the hierarchy's
// directory. The constructor waits until it accepts TCP and fails the test when it
// exits first; the destructor stops it.
#pragma once
#include <cstdint>

#include "bench/lab/dns_hierarchy.hpp"
#include "common/child_process.hpp"

namespace dnsarena::test {

class HintsKresd {
public:
  explicit HintsKresd(const bench::DnsHierarchy& h);
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return child_.pid(); }

private:
  std::uint16_t port_;
  common::ChildProcess child_;
};

}  // namespace dnsarena::test

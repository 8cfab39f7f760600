// SPDX-License-Identifier: GPL-3.0-or-later
// The smallest driver of recursion::IterativeResolution over real sockets, for tests: each
// query from a fresh UDP socket (a kernel-chosen source port), the name's letters in
// random case (0x20) with the reply required to echo them exactly, EDNS 1232, RD clear;
// a truncated reply asked again over TCP; no reply within `timeout` a failure. One query
// at a time, blocking: the serving resolver drives the machine from its event loop.
#pragma once
#include <chrono>

#include "recursion/iterative_resolution.hpp"

namespace dnsarena::test {

struct DriverCounts {
  unsigned udp = 0, tcp = 0, failures = 0, case_mismatches = 0;
};

// Runs `r` to its end; returns its result.
recursion::Result resolve_sync(recursion::IterativeResolution& r, DriverCounts& counts,
                               std::chrono::milliseconds timeout = std::chrono::milliseconds(400));

}  // namespace dnsarena::test

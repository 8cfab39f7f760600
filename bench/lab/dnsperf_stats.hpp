// SPDX-License-Identifier: GPL-3.0-or-later
// dnsperf's closing statistics as numbers: what `bench serve` and `bench upstream` read
// off a run's output (dnsperf 2.x, "  Queries sent:  20000" and so on).
#pragma once
#include <cstdint>
#include <string>

namespace dnsarena::bench {

struct DnsperfStats {
  std::uint64_t sent = 0, completed = 0, lost = 0;
  std::uint64_t nxdomain = 0;  // answers with rcode NXDOMAIN ("Response codes:" line)
  double qps = 0;
  double avg_latency_ms = 0, max_latency_ms = 0;
};

// Parses dnsperf's output; sent == 0 when it has no statistics (dnsperf failed).
DnsperfStats parse_dnsperf_output(const std::string& text);

}  // namespace dnsarena::bench

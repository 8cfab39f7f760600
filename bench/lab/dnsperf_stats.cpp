// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/dnsperf_stats.hpp"

#include <sstream>

namespace dnsarena::bench {

namespace {
// The number after the line's colon (0 when there is none).
double after_colon(const std::string& line) {
  const auto colon = line.find(':');
  return colon == std::string::npos ? 0.0 : std::stod(line.substr(colon + 1));
}
}  // namespace

DnsperfStats parse_dnsperf_output(const std::string& text) {
  DnsperfStats r;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto p = line.find_first_not_of(' ');
    if (p == std::string::npos) continue;
    const std::string l = line.substr(p);
    if (l.rfind("Queries sent:", 0) == 0) r.sent = static_cast<std::uint64_t>(after_colon(l));
    else if (l.rfind("Queries completed:", 0) == 0) r.completed = static_cast<std::uint64_t>(after_colon(l));
    else if (l.rfind("Queries lost:", 0) == 0) r.lost = static_cast<std::uint64_t>(after_colon(l));
    else if (l.rfind("Queries per second:", 0) == 0) r.qps = after_colon(l);
    else if (l.rfind("Response codes:", 0) == 0) {
      // "Response codes:       NOERROR 18000 (90.00%), NXDOMAIN 2000 (10.00%)"
      if (const auto nx = l.find("NXDOMAIN "); nx != std::string::npos)
        r.nxdomain = static_cast<std::uint64_t>(std::stoull(l.substr(nx + 9)));
    }
    else if (l.rfind("Average Latency (s):", 0) == 0) {
      // "Average Latency (s):  0.000466 (min 0.000113, max 0.011625)"
      r.avg_latency_ms = after_colon(l) * 1000.0;
      if (const auto max = l.find("max "); max != std::string::npos) r.max_latency_ms = std::stod(l.substr(max + 4)) * 1000.0;
    }
  }
  return r;
}

}  // namespace dnsarena::bench

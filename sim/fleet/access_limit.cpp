// SPDX-License-Identifier: GPL-3.0-or-later
#include "access_limit.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/line_cycle.hpp"

namespace dnsarena::sim::fleet {

namespace {

double thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

AccessRate measure_access_rate(std::size_t bytes, std::uint64_t seed, std::size_t steps) {
  // THP-advised, as cache::Segment::create_private maps the curves' segments.
  const common::LineCycle cycle(bytes, seed ^ 0xACCE55, common::PageAdvice::huge_pages);
  AccessRate r;
  r.bytes = static_cast<double>(bytes);
  r.dependent_ns = cycle.chase<1>(steps / 4, thread_cpu_ns);
  r.independent_ns = std::min(cycle.chase<8>(steps, thread_cpu_ns), cycle.chase<16>(steps, thread_cpu_ns));
  return r;
}

RequestRateLimit request_rate_limit(double accesses, double requests, double segment_bytes, std::uint64_t seed) {
  RequestRateLimit l;
  if (requests <= 0 || segment_bytes <= 0) return l;
  l.access = measure_access_rate(static_cast<std::size_t>(segment_bytes), seed);
  l.accesses_per_request = accesses / requests;
  l.requests_per_s = l.accesses_per_request > 0 && l.access.independent_ns > 0
                         ? 1e9 / (l.accesses_per_request * l.access.independent_ns)
                         : 0;
  return l;
}

}  // namespace dnsarena::sim::fleet

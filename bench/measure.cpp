// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/line_cycle.hpp"

#ifdef DNSARENA_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace dnsarena::bench {

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}
double seconds_since(std::uint64_t start) { return static_cast<double>(steady_ns() - start) / 1e9; }

TscClock::TscClock() {
  const std::uint64_t t0 = steady_ns(), c0 = ticks();
  while (steady_ns() - t0 < 50'000'000) {
  }
  const std::uint64_t t1 = steady_ns(), c1 = ticks();
  ns_per_tick_ = static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0);
  std::vector<double> o(2001);
  for (auto& v : o) {
    const std::uint64_t a = ticks();
    const std::uint64_t b = ticks();
    v = to_ns(b - a);
  }
  overhead_ns_ = median(o);
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0.0;
  const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

ProcMemory read_proc_memory(pid_t pid) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status") : "/proc/" + std::to_string(pid) + "/status");
  ProcMemory m;
  std::string key;
  std::uint64_t kb;
  std::string unit;
  while (in >> key) {
    if (key == "RssAnon:" || key == "RssFile:" || key == "RssShmem:") {
      in >> kb >> unit;
      (key == "RssAnon:" ? m.rss_anon : key == "RssFile:" ? m.rss_file : m.rss_shmem) = kb * 1024;
    } else {
      std::getline(in, unit);
    }
  }
  return m;
}

bool heap_accounting_available() {
#ifdef DNSARENA_HAVE_JEMALLOC
  return true;
#else
  return false;
#endif
}

std::uint64_t heap_allocated_bytes() {
#ifdef DNSARENA_HAVE_JEMALLOC
  std::uint64_t epoch = 1;
  std::size_t sz = sizeof(epoch);
  mallctl("epoch", &epoch, &sz, &epoch, sz);
  std::size_t allocated = 0;
  sz = sizeof(allocated);
  if (mallctl("stats.allocated", &allocated, &sz, nullptr, 0) != 0) return 0;
  return allocated;
#else
  return 0;
#endif
}

MlpResult mlp_ns_per_access(std::size_t bytes, std::uint64_t seed, common::PageAdvice pages, std::size_t steps) {
  const common::LineCycle buf(bytes, seed ^ 0xD7A4, pages);
  MlpResult r;
  r.dependent_ns = buf.chase<1>(steps, steady_ns);
  r.chains8_ns = buf.chase<8>(steps, steady_ns);
  r.chains16_ns = buf.chase<16>(steps, steady_ns);
  return r;
}

}  // namespace dnsarena::bench

#include "measure.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/workload/entry_generator.hpp"

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
double median(std::vector<double> v) { return percentile(v, 50.0); }

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

double dram_latency_ns(std::size_t bytes, std::uint64_t seed, std::size_t steps) {
  constexpr std::size_t kLine = 64;
  const std::size_t nodes = std::max<std::size_t>(bytes / kLine, 1024);
  const std::size_t len = nodes * kLine;
  void* mem = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("dram_latency_ns: mmap failed");
  ::madvise(mem, len, MADV_NOHUGEPAGE);
  auto* base = static_cast<std::uint8_t*>(mem);
  // Sattolo's algorithm: one random cycle through every node.
  std::vector<std::uint32_t> order(nodes);
  std::iota(order.begin(), order.end(), 0u);
  sim::SplitMix64 rng(seed ^ 0xD7A4);
  for (std::size_t i = nodes - 1; i > 0; --i) std::swap(order[i], order[rng.next() % i]);
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::size_t from = order[i], to = order[(i + 1) % nodes];
    *reinterpret_cast<std::uint8_t**>(base + from * kLine) = base + to * kLine;
  }
  std::vector<std::uint32_t>().swap(order);
  std::uint8_t* p = base + 0;
  for (std::size_t i = 0; i < steps / 8; ++i) p = *reinterpret_cast<std::uint8_t**>(p);  // warm the TLB walk caches
  const std::uint64_t t0 = steady_ns();
  for (std::size_t i = 0; i < steps; ++i) p = *reinterpret_cast<std::uint8_t**>(p);
  const double ns = static_cast<double>(steady_ns() - t0) / static_cast<double>(steps);
  asm volatile("" : : "r"(p) : "memory");
  ::munmap(mem, len);
  return ns;
}

}  // namespace dnsarena::bench

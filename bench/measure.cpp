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

namespace {

constexpr std::size_t kLine = 64;

// One random cycle through every 64-byte line of an anonymous 4 KiB-page mapping
// (Sattolo's algorithm), each line holding the address of the next. The pointer-chase
// buffer of dram_latency_ns and mlp_ns_per_access.
class ChaseBuffer {
public:
  ChaseBuffer(std::size_t bytes, std::uint64_t seed) : nodes_(std::max<std::size_t>(bytes / kLine, 1024)) {
    len_ = nodes_ * kLine;
    void* mem = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) throw std::runtime_error("pointer chase: mmap failed");
    ::madvise(mem, len_, MADV_NOHUGEPAGE);
    base_ = static_cast<std::uint8_t*>(mem);
    order_.resize(nodes_);
    std::iota(order_.begin(), order_.end(), 0u);
    sim::SplitMix64 rng(seed ^ 0xD7A4);
    for (std::size_t i = nodes_ - 1; i > 0; --i) std::swap(order_[i], order_[rng.next() % i]);
    for (std::size_t i = 0; i < nodes_; ++i) {
      const std::size_t from = order_[i], to = order_[(i + 1) % nodes_];
      *reinterpret_cast<std::uint8_t**>(base_ + from * kLine) = base_ + to * kLine;
    }
  }
  ~ChaseBuffer() { ::munmap(base_, len_); }
  ChaseBuffer(const ChaseBuffer&) = delete;
  ChaseBuffer& operator=(const ChaseBuffer&) = delete;
  // The node at position i of the cycle (i < nodes()).
  std::uint8_t* at_cycle_position(std::size_t i) const { return base_ + std::size_t{order_[i]} * kLine; }
  std::size_t nodes() const { return nodes_; }

private:
  std::size_t nodes_, len_ = 0;
  std::uint8_t* base_ = nullptr;
  std::vector<std::uint32_t> order_;
};

inline std::uint8_t* next_of(std::uint8_t* p) { return *reinterpret_cast<std::uint8_t**>(p); }

// K chains started at evenly spaced points of the one cycle, advanced in lock step: the
// K loads of a step are independent, so the core keeps up to K misses in flight.
template <std::size_t K>
double chase_chains(const ChaseBuffer& buf, std::size_t steps) {
  std::uint8_t* p[K];
  for (std::size_t c = 0; c < K; ++c) p[c] = buf.at_cycle_position(c * (buf.nodes() / K));
  const std::size_t rounds = std::max<std::size_t>(steps / K, 1);
  for (std::size_t i = 0; i < rounds / 8; ++i)  // warm the TLB walk caches
    for (std::size_t c = 0; c < K; ++c) p[c] = next_of(p[c]);
  const std::uint64_t t0 = steady_ns();
  for (std::size_t i = 0; i < rounds; ++i)
    for (std::size_t c = 0; c < K; ++c) p[c] = next_of(p[c]);
  const double ns = static_cast<double>(steady_ns() - t0) / static_cast<double>(rounds * K);
  for (std::size_t c = 0; c < K; ++c) asm volatile("" : : "r"(p[c]) : "memory");
  return ns;
}

}  // namespace

double dram_latency_ns(std::size_t bytes, std::uint64_t seed, std::size_t steps) {
  const ChaseBuffer buf(bytes, seed);
  return chase_chains<1>(buf, steps);
}

MlpResult mlp_ns_per_access(std::size_t bytes, std::uint64_t seed, std::size_t steps) {
  const ChaseBuffer buf(bytes, seed);
  MlpResult r;
  r.dependent_ns = chase_chains<1>(buf, steps);
  r.chains8_ns = chase_chains<8>(buf, steps);
  r.chains16_ns = chase_chains<16>(buf, steps);
  return r;
}

}  // namespace dnsarena::bench

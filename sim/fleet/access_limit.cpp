#include "access_limit.hpp"

#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "sim/workload/entry_generator.hpp"

namespace dnsarena::sim::fleet {

namespace {

constexpr std::size_t kLine = 64;

double thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// One random cycle through every 64-byte line of a THP-advised anonymous mapping.
class LineCycle {
public:
  LineCycle(std::size_t bytes, std::uint64_t seed) : lines_(std::max<std::size_t>(bytes / kLine, 1024)) {
    len_ = lines_ * kLine;
    void* mem = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) throw std::runtime_error("access limit: mmap of the measuring buffer failed");
    ::madvise(mem, len_, MADV_HUGEPAGE);  // as cache::Segment::create_private
    base_ = static_cast<std::uint8_t*>(mem);
    std::vector<std::uint32_t> order(lines_);
    std::iota(order.begin(), order.end(), 0u);
    SplitMix64 rng(seed ^ 0xACCE55);
    for (std::size_t i = lines_ - 1; i > 0; --i) std::swap(order[i], order[rng.next() % i]);
    for (std::size_t i = 0; i < lines_; ++i)
      *reinterpret_cast<std::uint8_t**>(base_ + std::size_t{order[i]} * kLine) = base_ + std::size_t{order[(i + 1) % lines_]} * kLine;
    start_ = base_ + std::size_t{order[0]} * kLine;
  }
  ~LineCycle() { ::munmap(base_, len_); }
  LineCycle(const LineCycle&) = delete;
  LineCycle& operator=(const LineCycle&) = delete;

  // K chains started lines/K apart along the cycle, advanced in lock step: the K
  // loads of a step are independent. Nanoseconds of thread CPU time per access.
  template <std::size_t K>
  double chase(std::size_t steps) const {
    std::uint8_t* p[K];
    p[0] = start_;
    const std::size_t gap = lines_ / K;
    for (std::size_t c = 1; c < K; ++c) {
      p[c] = p[c - 1];
      for (std::size_t i = 0; i < gap; ++i) p[c] = next(p[c]);
    }
    const std::size_t rounds = std::max<std::size_t>(steps / K, 1);
    for (std::size_t i = 0; i < rounds / 8; ++i)  // warm the TLB
      for (std::size_t c = 0; c < K; ++c) p[c] = next(p[c]);
    const double t0 = thread_cpu_ns();
    for (std::size_t i = 0; i < rounds; ++i)
      for (std::size_t c = 0; c < K; ++c) p[c] = next(p[c]);
    const double ns = (thread_cpu_ns() - t0) / static_cast<double>(rounds * K);
    for (std::size_t c = 0; c < K; ++c) asm volatile("" : : "r"(p[c]) : "memory");
    return ns;
  }

private:
  static std::uint8_t* next(std::uint8_t* p) { return *reinterpret_cast<std::uint8_t**>(p); }
  std::size_t lines_, len_ = 0;
  std::uint8_t* base_ = nullptr;
  std::uint8_t* start_ = nullptr;
};

}  // namespace

AccessRate measure_access_rate(std::size_t bytes, std::uint64_t seed, std::size_t steps) {
  const LineCycle cycle(bytes, seed);
  AccessRate r;
  r.bytes = static_cast<double>(bytes);
  r.dependent_ns = cycle.chase<1>(steps / 4);
  r.independent_ns = std::min(cycle.chase<8>(steps), cycle.chase<16>(steps));
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

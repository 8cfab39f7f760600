// SPDX-License-Identifier: GPL-3.0-or-later
#include "line_cycle.hpp"

#include <sys/mman.h>

#include <numeric>
#include <random>
#include <stdexcept>

namespace dnsarena::common {

LineCycle::LineCycle(std::size_t bytes, std::uint64_t seed, PageAdvice advice)
    : lines_(std::max<std::size_t>(bytes / kLine, 1024)) {
  len_ = lines_ * kLine;
  void* mem = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("pointer-chase buffer: mmap of " + std::to_string(len_) + " bytes failed");
  ::madvise(mem, len_, advice == PageAdvice::huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  base_ = static_cast<std::uint8_t*>(mem);
  order_.resize(lines_);
  std::iota(order_.begin(), order_.end(), 0u);
  std::mt19937_64 rng(seed);
  for (std::size_t i = lines_ - 1; i > 0; --i) std::swap(order_[i], order_[rng() % i]);  // Sattolo: one cycle
  for (std::size_t i = 0; i < lines_; ++i)
    *reinterpret_cast<std::uint8_t**>(at_position(i)) = at_position((i + 1) % lines_);
}

LineCycle::~LineCycle() { ::munmap(base_, len_); }

}  // namespace dnsarena::common

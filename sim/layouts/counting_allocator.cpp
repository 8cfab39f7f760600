// SPDX-License-Identifier: GPL-3.0-or-later
#include "counting_allocator.hpp"

#ifdef DNSARENA_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace dnsarena::sim::layouts {

namespace {
thread_local AllocCounter* t_current = nullptr;
}  // namespace

AllocCounter& alloc_counter() {
  if (t_current) return *t_current;
  static thread_local AllocCounter fallback;
  return fallback;
}

CounterScope::CounterScope(AllocCounter* c) : previous_(t_current) { t_current = c; }
CounterScope::~CounterScope() { t_current = previous_; }

std::size_t allocated_size(std::size_t n) {
  if (n == 0) return 0;
#ifdef DNSARENA_HAVE_JEMALLOC
  return nallocx(n, 0);
#else
  // Estimate for glibc malloc: an 8-byte header, 16-byte granules, 32-byte minimum chunk.
  const std::size_t chunk = (n + 8 + 15) & ~std::size_t{15};
  return chunk < 32 ? 32 : chunk;
#endif
}

bool allocated_bytes_is_estimate() {
#ifdef DNSARENA_HAVE_JEMALLOC
  return false;
#else
  return true;
#endif
}

void AllocCounter::add_large(std::size_t n, int sign) {
  large_bytes_ += sign * static_cast<std::int64_t>(n);
  large_alloc_bytes_ += sign * static_cast<std::int64_t>(allocated_size(n));
  large_count_ += sign;
}

AllocTotals AllocCounter::totals() const {
  AllocTotals t;
  for (std::size_t n = 0; n < kSmall; ++n) {
    if (small_[n] == 0) continue;
    t.net_bytes += small_[n] * static_cast<std::int64_t>(n);
    t.alloc_bytes += small_[n] * static_cast<std::int64_t>(allocated_size(n));
    t.allocs += small_[n];
  }
  t.net_bytes += large_bytes_;
  t.alloc_bytes += large_alloc_bytes_;
  t.allocs += large_count_;
  return t;
}

}  // namespace dnsarena::sim::layouts

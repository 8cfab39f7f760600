// SPDX-License-Identifier: GPL-3.0-or-later
#include "memory_warmup.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <sys/types.h>

#ifdef DNSARENA_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace dnsarena::sim::layouts {

namespace {
#ifdef DNSARENA_HAVE_JEMALLOC
// Sets the decay of every initialised arena ("arena.<i>.*"; MALLCTL_ARENAS_ALL is not
// accepted for decay settings: EFAULT). True when at least one arena took it.
bool set_decay(const char* which, long ms) {
  unsigned narenas = 0;
  std::size_t len = sizeof narenas;
  if (mallctl("arenas.narenas", &narenas, &len, nullptr, 0) != 0) return false;
  bool any = false;
  for (unsigned i = 0; i < narenas; ++i) {
    const std::string name = "arena." + std::to_string(i) + "." + which;
    ssize_t v = ms;
    any |= mallctl(name.c_str(), nullptr, nullptr, &v, sizeof v) == 0;  // EFAULT: arena not in use
  }
  return any;
}
long get_default_decay(const char* which) {
  ssize_t v = 0;
  std::size_t len = sizeof v;
  const std::string name = std::string("arenas.") + which;
  return mallctl(name.c_str(), &v, &len, nullptr, 0) == 0 ? static_cast<long>(v) : 10000;
}
#endif
}  // namespace

HeapPageRetention::HeapPageRetention() {
#ifdef DNSARENA_HAVE_JEMALLOC
  dirty_ms_ = get_default_decay("dirty_decay_ms");
  muzzy_ms_ = get_default_decay("muzzy_decay_ms");
  active_ = set_decay("dirty_decay_ms", -1) && set_decay("muzzy_decay_ms", -1);
#endif
}

HeapPageRetention::~HeapPageRetention() {
#ifdef DNSARENA_HAVE_JEMALLOC
  if (!active_) return;
  set_decay("dirty_decay_ms", dirty_ms_);
  set_decay("muzzy_decay_ms", muzzy_ms_);
#endif
}

void prefault_range(void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(p) + n;
#ifdef MADV_POPULATE_WRITE
  if (::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE) == 0) return;
#else
  constexpr int kPopulateWrite = 23;  // Linux 5.14+
  if (::madvise(reinterpret_cast<void*>(start), end - start, kPopulateWrite) == 0) return;
#endif
  for (std::uintptr_t a = start; a < end; a += page) (void)*reinterpret_cast<volatile const std::uint8_t*>(a);
}

}  // namespace dnsarena::sim::layouts

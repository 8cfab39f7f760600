// SPDX-License-Identifier: GPL-3.0-or-later
// An allocator for the trace's large random-access tables (alias cells, head keys):
// blocks of 2 MiB or more are mapped 2 MiB-aligned with MADV_HUGEPAGE, so a random read
// into them needs no 4 KiB page walk (transparent huge pages are `madvise` on this VM:
// malloc's large blocks get 4 KiB pages). Smaller blocks come from operator new.
//
// Why: `perf record -e cpu-clock` of the curve runs put ~14% of the time in the trace
// draw, most of it on the alias cell loads and on the prefetch instructions themselves
// (a prefetch that misses the TLB walks the page tables first); a kept-tail alias table
// is 8 bytes x R x names (3.9 MB for the ordinary datacenter at R = 0.008).
// Costs: one mmap/munmap per large block; up to 2 MiB of address space rounding.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace dnsarena::sim::fleet {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new(bytes));
    // Over-map by one huge page, keep the aligned part, unmap the rest.
    const std::size_t rounded = round_up(bytes);
    void* raw = ::mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto base = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (base + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > base) ::munmap(raw, aligned - base);
    const std::uintptr_t end = base + rounded + kHugePage;
    if (end > aligned + rounded) ::munmap(reinterpret_cast<void*>(aligned + rounded), end - (aligned + rounded));
    ::madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);
    return reinterpret_cast<T*>(aligned);
  }

  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) ::operator delete(p);
    else ::munmap(p, round_up(bytes));
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }

private:
  static std::size_t round_up(std::size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }
};

}  // namespace dnsarena::sim::fleet

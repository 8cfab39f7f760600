// SPDX-License-Identifier: GPL-3.0-or-later
// The counting allocator of the layout experiments, as the published fleet's benchmark used one.
//
// Every heap layout (v0..v5) allocates only through CountingAllocator<T> (directly, or
// through the CString / CVector / BoxedSlice / Box types below). Each allocation and
// deallocation updates a per-thread histogram of live allocations by requested size, so
// at any moment we know, for everything a layout holds:
//   net bytes       sum of sizes requested (structs, map nodes, bucket arrays, payloads)
//   allocated bytes what the allocator really hands out for those requests: nallocx()
//                   when jemalloc is linked, else an estimate (glibc-like: size + 8
//                   rounded up to 16, at least 32), flagged by allocated_bytes_is_estimate()
//   allocations     number of live blocks
// The histogram costs one increment per call; the rounding is applied when reading.
// Each layout owns an AllocCounter and makes it the thread's current one (CounterScope)
// around everything it does, so several layouts alive at once are counted apart.
// REQUIRES: a layout is used from one thread at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dnsarena::sim::layouts {

struct AllocTotals {
  std::int64_t net_bytes = 0;
  std::int64_t alloc_bytes = 0;
  std::int64_t allocs = 0;
};

class AllocCounter {
public:
  static constexpr std::size_t kSmall = 4096;  // sizes below this go to the histogram
  void on_allocate(std::size_t n) {
    if (n < kSmall) ++small_[n];
    else add_large(n, +1);
  }
  void on_deallocate(std::size_t n) {
    if (n < kSmall) --small_[n];
    else add_large(n, -1);
  }
  // Live totals now.
  AllocTotals totals() const;

private:
  void add_large(std::size_t n, int sign);
  std::int64_t small_[kSmall] = {};
  std::int64_t large_bytes_ = 0, large_alloc_bytes_ = 0, large_count_ = 0;
};

// The calling thread's current counter (a per-thread default when no scope is active).
AllocCounter& alloc_counter();

// Makes `c` the calling thread's current counter until the scope ends.
class CounterScope {
public:
  explicit CounterScope(AllocCounter* c);
  ~CounterScope();
  CounterScope(const CounterScope&) = delete;
  CounterScope& operator=(const CounterScope&) = delete;

private:
  AllocCounter* previous_;
};
// What the allocator hands out for a request of n bytes (see the header comment).
std::size_t allocated_size(std::size_t n);
bool allocated_bytes_is_estimate();

template <class T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() noexcept = default;
  template <class U>
  CountingAllocator(const CountingAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    alloc_counter().on_allocate(n * sizeof(T));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    alloc_counter().on_deallocate(n * sizeof(T));
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>&) const noexcept { return true; }
};

// Growable containers (layout v0): a string keeps a capacity and 15 bytes inline (SSO).
using CString = std::basic_string<char, std::char_traits<char>, CountingAllocator<char>>;
template <class T>
using CVector = std::vector<T, CountingAllocator<T>>;

// A fixed-size boxed slice (layouts v1+): pointer and length, no capacity, exactly
// `size` elements on the heap (none when empty). Rust's Box<[T]>.
template <class T>
class BoxedSlice {
public:
  BoxedSlice() = default;
  explicit BoxedSlice(std::size_t n) : ptr_(n ? CountingAllocator<T>().allocate(n) : nullptr), size_(n) {
    for (std::size_t i = 0; i < n; ++i) new (ptr_ + i) T();
  }
  explicit BoxedSlice(std::span<const T> src) : ptr_(src.empty() ? nullptr : CountingAllocator<T>().allocate(src.size())), size_(src.size()) {
    for (std::size_t i = 0; i < size_; ++i) new (ptr_ + i) T(src[i]);
  }
  BoxedSlice(BoxedSlice&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  BoxedSlice& operator=(BoxedSlice&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  BoxedSlice(const BoxedSlice&) = delete;
  BoxedSlice& operator=(const BoxedSlice&) = delete;
  ~BoxedSlice() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T& operator[](std::size_t i) { return ptr_[i]; }
  const T& operator[](std::size_t i) const { return ptr_[i]; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + size_; }
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }
  std::span<const T> span() const { return {ptr_, size_}; }

private:
  void release() {
    if (!ptr_) return;
    for (std::size_t i = 0; i < size_; ++i) ptr_[i].~T();
    CountingAllocator<T>().deallocate(ptr_, size_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

using BoxedBytes = BoxedSlice<std::uint8_t>;

// A boxed value (layout v4's large rdata alternatives): one pointer. Rust's Box<T>.
template <class T>
struct CountingDelete {
  void operator()(T* p) const noexcept {
    p->~T();
    CountingAllocator<T>().deallocate(p, 1);
  }
};
template <class T>
using Box = std::unique_ptr<T, CountingDelete<T>>;
template <class T, class... Args>
Box<T> make_box(Args&&... args) {
  T* p = CountingAllocator<T>().allocate(1);
  new (p) T{std::forward<Args>(args)...};
  return Box<T>(p);
}

// Byte views of the string types.
inline std::span<const std::uint8_t> bytes_of(const CString& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
inline std::span<const std::uint8_t> bytes_of(const BoxedBytes& s) { return s.span(); }
inline std::span<const std::uint8_t> bytes_of(const CVector<std::uint8_t>& s) { return {s.data(), s.size()}; }
inline CString make_cstring(std::span<const std::uint8_t> b) {
  return CString(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace dnsarena::sim::layouts

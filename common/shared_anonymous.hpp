// SPDX-License-Identifier: GPL-3.0-or-later
// One object of type T in an anonymous shared mapping: a parent and the children it forks
// afterwards see the same object (counters, flags, logs of multi-process tests and of
// `bench torture`). T is constructed in place and destroyed with the mapping; it should
// hold only atomics and plain bytes (several processes use it at once).
#pragma once
#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace dnsarena::common {

template <class T>
class SharedAnonymous {
public:
  SharedAnonymous() {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap of a shared anonymous page failed");
    object_ = new (p) T();
  }
  ~SharedAnonymous() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  SharedAnonymous(const SharedAnonymous&) = delete;
  SharedAnonymous& operator=(const SharedAnonymous&) = delete;
  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }
  T* get() const { return object_; }

private:
  T* object_;
};

}  // namespace dnsarena::common

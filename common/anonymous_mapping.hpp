// SPDX-License-Identifier: GPL-3.0-or-later
// A zero-filled anonymous mapping of N bytes: shared (MAP_SHARED, so children forked
// afterwards see the same bytes: the serve supervisor's host-wide tables) or private to
// this process. Unmapped on destruction. Holds no pointers into itself, so it may be
// moved.
#pragma once
#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>
#include <utility>

namespace dnsarena::common {

class AnonymousMapping {
public:
  AnonymousMapping() = default;
  // Throws std::system_error naming `what` when mmap fails.
  AnonymousMapping(std::size_t bytes, bool shared, const std::string& what) : bytes_(bytes) {
    data_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED) {
      data_ = nullptr;
      throw std::system_error(errno, std::generic_category(), what);
    }
  }
  ~AnonymousMapping() {
    if (data_) ::munmap(data_, bytes_);
  }
  AnonymousMapping(AnonymousMapping&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  AnonymousMapping& operator=(AnonymousMapping&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace dnsarena::common

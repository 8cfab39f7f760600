// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/random_bytes.hpp"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dnsarena::common {

namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kHeaderBytes = 64;
static_assert(kHeaderBytes + kRandomBufferBytes == kPageBytes);

void kernel_fill(std::uint8_t* out, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::getrandom(out, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    out += got;
    n -= static_cast<std::size_t>(got);
  }
}

// The calling thread's page (layout in the header), or nullptr when it cannot be had
// with MADV_WIPEONFORK: then the caller goes to the kernel every time.
class ThreadBuffer {
public:
  ThreadBuffer() {
    void* p = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    if (::madvise(p, kPageBytes, MADV_WIPEONFORK) != 0) {
      ::munmap(p, kPageBytes);
      return;
    }
    page_ = static_cast<std::uint8_t*>(p);
  }
  ~ThreadBuffer() {
    if (page_) ::munmap(page_, kPageBytes);
  }
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  bool usable() const { return page_ != nullptr; }

  void fill(std::uint8_t* out, std::size_t n) {
    std::uint32_t unused;
    std::memcpy(&unused, page_, sizeof unused);
    std::uint8_t* bytes = page_ + kHeaderBytes;
    while (n > 0) {
      if (unused == 0) {
        kernel_fill(bytes, kRandomBufferBytes);
        unused = static_cast<std::uint32_t>(kRandomBufferBytes);
      }
      const std::size_t take = n < unused ? n : unused;
      unused -= static_cast<std::uint32_t>(take);
      std::memcpy(out, bytes + unused, take);
      std::memset(bytes + unused, 0, take);  // handed out: not kept where a later reader finds it
      out += take;
      n -= take;
    }
    std::memcpy(page_, &unused, sizeof unused);
  }

private:
  std::uint8_t* page_ = nullptr;
};

}  // namespace

void random_fill(void* out, std::size_t n) {
  thread_local ThreadBuffer buffer;
  auto* o = static_cast<std::uint8_t*>(out);
  if (n >= kRandomBufferBytes / 4 || !buffer.usable()) return kernel_fill(o, n);  // large draws: straight from the kernel
  buffer.fill(o, n);
}

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/sealed_image.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

SealedImage::SealedImage(std::span<const std::uint8_t> image) : bytes_(image.size()) {
  auto fail = [](const char* what) { throw PolicyError(std::string("policy image: ") + what + ": " + std::strerror(errno)); };
  const int fd = ::memfd_create("dnsarena-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) fail("memfd_create");
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n <= 0) {
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    ::close(fd);
    fail("sealing");
  }
  map_ = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping keeps the memory
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    fail("mmap");
  }
  try {
    view_ = PolicyView({static_cast<const std::uint8_t*>(map_), bytes_});
  } catch (...) {
    ::munmap(map_, bytes_);
    throw;
  }
}

SealedImage::~SealedImage() {
  if (map_) ::munmap(map_, bytes_);
}

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
// A compiled image in a sealed memfd, mapped read-only: the supervisor makes it once per
// (re)load, and every worker it forks afterwards inherits the mapping, so N workers share
// one copy of the pages. The seals (no write, shrink or grow, no further seals) make the
// image immutable for every process that maps it, the supervisor included.
//
// Lifetime: the supervisor holds the current image; a reload makes a new one, forks the
// new workers on it and drops its own reference to the old one. The old pages stay mapped
// in the retiring workers (a fork copies mappings, not references the parent holds) and
// the kernel frees them when the last of those processes has exited: nothing on disk or
// in /dev/shm to clean up after a crash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "policy/policy_view.hpp"

namespace dnsarena::policy {

class SealedImage {
public:
  // Copies `image` into a new sealed memfd and maps it read-only. Throws PolicyError.
  explicit SealedImage(std::span<const std::uint8_t> image);
  ~SealedImage();
  SealedImage(const SealedImage&) = delete;
  SealedImage& operator=(const SealedImage&) = delete;

  const PolicyView& view() const { return view_; }
  std::size_t bytes() const { return bytes_; }

private:
  void* map_ = nullptr;
  std::size_t bytes_ = 0;
  PolicyView view_;
};

}  // namespace dnsarena::policy

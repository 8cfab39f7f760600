// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/retirement_wait.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/monotonic_clock.hpp"
#include "workers/worker.hpp"

namespace dnsarena::workers {

namespace {

// True once the pipe has given kBeatRetired or end of file; reads all that is waiting.
bool confirmed(int fd) {
  char buf[64];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;  // the worker exited
    if (n < 0) return false;  // EAGAIN: nothing more yet
    if (std::find(buf, buf + n, kBeatRetired) != buf + n) return true;
  }
}

}  // namespace

std::vector<std::size_t> await_stopped_reading(std::span<const int> beat_fds, std::uint64_t timeout_ms) {
  std::vector<std::size_t> waiting;
  for (std::size_t i = 0; i < beat_fds.size(); ++i) waiting.push_back(i);
  const std::uint64_t deadline = common::monotonic_ms() + timeout_ms;
  std::vector<pollfd> polled;
  for (;;) {
    std::erase_if(waiting, [&](std::size_t i) { return beat_fds[i] >= 0 && confirmed(beat_fds[i]); });
    polled.clear();
    for (std::size_t i : waiting)
      if (beat_fds[i] >= 0) polled.push_back({beat_fds[i], POLLIN, 0});
    const std::uint64_t now = common::monotonic_ms();
    if (polled.empty() || now >= deadline) break;
    if (::poll(polled.data(), polled.size(), static_cast<int>(deadline - now)) < 0 && errno != EINTR) break;
  }
  return waiting;
}

}  // namespace dnsarena::workers

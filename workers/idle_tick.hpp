// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's idle tick: a periodic timerfd in the worker's epoll set, so that the event
// loop can sleep without a timeout when nothing of its own is due sooner.
//
// Why: epoll_wait with a timeout arms a high-resolution timer on every sleep and cancels
// it on every wakeup. Under a light load, where each datagram is a wakeup of its own, that
// is a timer start and cancel per query, and on a virtual machine each reprogramming of
// the CPU's deadline timer is a trap to the hypervisor. The periodic timer is armed once
// and re-arms itself in the kernel; the loop's periodic duties (heartbeat, sweeps, the
// pipeline's timers) run at least once per period, as they did with the 100 ms timeout.
// When the pipeline has a deadline sooner than the period (a query in flight), the loop
// passes that timeout to epoll_wait as before.
//
// Cost: one descriptor (within the worker's descriptor margin, descriptor_budget.hpp) and
// one read per period when the worker is idle.
#pragma once
#include <sys/timerfd.h>
#include <unistd.h>

#include <cstdint>

namespace dnsarena::workers {

class IdleTick {
public:
  // fd() < 0 when the timer could not be made: the loop then keeps a timeout.
  explicit IdleTick(unsigned period_ms) {
    fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd_ < 0) return;
    const timespec period{static_cast<time_t>(period_ms / 1000), static_cast<long>(period_ms % 1000) * 1'000'000L};
    const itimerspec spec{period, period};
    if (::timerfd_settime(fd_, 0, &spec, nullptr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~IdleTick() {
    if (fd_ >= 0) ::close(fd_);
  }
  IdleTick(const IdleTick&) = delete;
  IdleTick& operator=(const IdleTick&) = delete;

  int fd() const { return fd_; }
  // Clears the expirations so the level-triggered descriptor is quiet until the next one.
  void drain() const {
    std::uint64_t expirations = 0;
    [[maybe_unused]] const ssize_t r = ::read(fd_, &expirations, sizeof expirations);
  }

private:
  int fd_ = -1;
};

}  // namespace dnsarena::workers

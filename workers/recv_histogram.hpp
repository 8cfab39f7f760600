// SPDX-License-Identifier: GPL-3.0-or-later
// A debug stat of the UDP receive path: how many datagrams each recvmmsg returned, and
// how many epoll wakeups and sendmmsg calls carried them (syscalls per wakeup).
//
// Purpose: measuring batch sizes at a given load without a profiler. Off unless the
// environment names a file: DNSARENA_RECV_HISTOGRAM=/path makes each worker append one
// line there when it exits (SIGTERM), e.g.
//   pid 1234 wakeups 30012 recvmmsg 30390 sendmmsg 30011 datagrams 150000 hist 0:378 1:20001 2:5000 ...
// where `k:n` means n calls returned k datagrams (0: EAGAIN).
// Costs: one increment per recvmmsg when enabled, one branch when not.
#pragma once
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace dnsarena::workers {

template <std::size_t kMaxBatch>
class RecvHistogram {
public:
  RecvHistogram() {
    const char* p = std::getenv("DNSARENA_RECV_HISTOGRAM");
    if (p && *p) path_ = p;
  }
  RecvHistogram(const RecvHistogram&) = delete;
  RecvHistogram& operator=(const RecvHistogram&) = delete;
  ~RecvHistogram() { write(); }

  bool enabled() const { return !path_.empty(); }
  void wakeup() { if (enabled()) ++wakeups_; }
  void received(int n) { if (enabled()) ++calls_[n < 0 ? 0 : static_cast<std::size_t>(n)]; }
  void sent_batch() { if (enabled()) ++sendmmsg_; }

private:
  void write() const {
    if (!enabled()) return;
    std::uint64_t calls = 0, datagrams = 0;
    std::string hist;
    for (std::size_t k = 0; k < calls_.size(); ++k) {
      calls += calls_[k];
      datagrams += k * calls_[k];
      if (calls_[k]) hist += " " + std::to_string(k) + ":" + std::to_string(calls_[k]);
    }
    if (FILE* f = std::fopen(path_.c_str(), "a")) {
      std::fprintf(f, "pid %d wakeups %llu recvmmsg %llu sendmmsg %llu datagrams %llu hist%s\n", ::getpid(),
                   static_cast<unsigned long long>(wakeups_), static_cast<unsigned long long>(calls),
                   static_cast<unsigned long long>(sendmmsg_), static_cast<unsigned long long>(datagrams), hist.c_str());
      std::fclose(f);
    }
  }

  std::string path_;
  std::uint64_t wakeups_ = 0, sendmmsg_ = 0;
  std::array<std::uint64_t, kMaxBatch + 1> calls_{};
};

}  // namespace dnsarena::workers

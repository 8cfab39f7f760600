// SPDX-License-Identifier: GPL-3.0-or-later
// Background load for the admin tests: a thread sending UDP queries for a fixed list of
// names, round and round, to a live `dnsarena serve`, until destroyed. The workers keep
// looking up and inserting (the names it sends first are misses) while a tool runs.
#pragma once
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/workers/serve_harness.hpp"

namespace dnsarena::test {

class LiveLoad {
public:
  LiveLoad(std::uint16_t port, std::vector<std::pair<std::string, std::uint16_t>> questions)
      : port_(port), questions_(std::move(questions)), thread_([this] { run(); }) {}
  ~LiveLoad() {
    stop_ = true;
    thread_.join();
  }
  std::uint64_t answered() const { return answered_.load(); }
  // Waits until `n` more answers came back (false after ~10 s).
  bool wait_answers(std::uint64_t n) {
    const std::uint64_t target = answered_.load() + n;
    for (int i = 0; i < 1000 && answered_.load() < target; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return answered_.load() >= target;
  }

private:
  void run() {
    std::uint16_t id = 1;
    while (!stop_)
      for (const auto& [name, type] : questions_) {
        if (stop_) break;
        if (udp_exchange(port_, make_query(id++, name, type), std::chrono::milliseconds(500)).answered) ++answered_;
      }
  }
  std::uint16_t port_;
  std::vector<std::pair<std::string, std::uint16_t>> questions_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> answered_{0};
  std::thread thread_;
};

// Names n0.load.test. ... under a zone no test flushes: NXDOMAIN answers, each cached.
inline std::vector<std::pair<std::string, std::uint16_t>> load_names(unsigned n) {
  std::vector<std::pair<std::string, std::uint16_t>> q;
  for (unsigned i = 0; i < n; ++i) q.emplace_back("n" + std::to_string(i) + ".load.test.", 1);
  return q;
}

// Runs `dnsarena ARGS` and returns stdout and stderr; the exit code in *status.
inline std::string run_dnsarena(const std::string& args, int* status) {
  return run_command(dnsarena_binary() + " " + args + " 2>&1", status);
}

}  // namespace dnsarena::test

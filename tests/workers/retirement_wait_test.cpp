// SPDX-License-Identifier: GPL-3.0-or-later
// await_stopped_reading (workers/retirement_wait.hpp) on real pipes: what confirms a
// retired worker stopped reading, and that the wait is bounded.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "workers/retirement_wait.hpp"
#include "workers/worker.hpp"

using namespace dnsarena::workers;

namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
    read_end = fds[0];
    write_end = fds[1];
  }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    close_writer();
  }
  void write(char c) const { REQUIRE(::write(write_end, &c, 1) == 1); }
  void close_writer() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

std::uint64_t elapsed_ms(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count());
}

}  // namespace

TEST_CASE("retirement wait: the retired byte after heartbeats confirms, heartbeats alone do not", "[supervisor]") {
  Pipe retired, beating;
  for (int i = 0; i < 100; ++i) retired.write(kBeatAlive);
  retired.write(kBeatRetired);
  beating.write(kBeatAlive);
  const int fds[] = {retired.read_end, beating.read_end};
  const auto t0 = std::chrono::steady_clock::now();
  const auto left = await_stopped_reading(fds, 80);
  CHECK(left == std::vector<std::size_t>{1});
  CHECK(elapsed_ms(t0) >= 80);  // it waited its bound for the one still beating
}

TEST_CASE("retirement wait: a worker that exited confirms (end of file)", "[supervisor]") {
  Pipe exited;
  exited.write(kBeatAlive);
  exited.close_writer();
  const int fds[] = {exited.read_end};
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(await_stopped_reading(fds, 5000).empty());
  CHECK(elapsed_ms(t0) < 2500);  // not the bound
}

TEST_CASE("retirement wait: returns as soon as the last one confirms, and a worker without a pipe is named",
          "[supervisor]") {
  Pipe late;
  const int fds[] = {late.read_end, -1};
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    late.write(kBeatAlive);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    late.write(kBeatRetired);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto left = await_stopped_reading(fds, 5000);
  worker.join();
  CHECK(left == std::vector<std::size_t>{1});
  CHECK(elapsed_ms(t0) >= 90);
  CHECK(elapsed_ms(t0) < 2500);
}

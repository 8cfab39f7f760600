// SPDX-License-Identifier: GPL-3.0-or-later
// The buffered random source (common/random_bytes.hpp): bytes are not handed out twice,
// not across a buffer refill and not to a forked child, and look uniform.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/random_bytes.hpp"

using dnsarena::common::kRandomBufferBytes;
using dnsarena::common::random_fill;

namespace {

std::vector<std::uint8_t> draw(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  random_fill(v.data(), v.size());
  return v;
}

}  // namespace

TEST_CASE("random bytes: small draws across several refills never repeat a 16-byte draw", "[random]") {
  std::set<std::vector<std::uint8_t>> seen;
  const std::size_t draws = 4 * kRandomBufferBytes / 16;
  for (std::size_t i = 0; i < draws; ++i) REQUIRE(seen.insert(draw(16)).second);
}

TEST_CASE("random bytes: byte values are uniform over a megabyte of small draws", "[random]") {
  std::array<std::uint64_t, 256> counts{};
  const std::size_t total = 1 << 20;
  for (std::size_t done = 0; done < total; done += 4) {
    std::uint8_t b[4];
    random_fill(b, sizeof b);
    for (std::uint8_t x : b) ++counts[x];
  }
  // Each count is Binomial(2^20, 1/256): mean 4096, sigma 64; 7 sigma either side.
  for (std::uint64_t c : counts) {
    CHECK(c > 4096 - 7 * 64);
    CHECK(c < 4096 + 7 * 64);
  }
}

TEST_CASE("random bytes: a forked child does not hand out the parent's buffered bytes", "[random]") {
  draw(8);  // the parent's buffer is full, less 8 bytes
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::vector<std::uint8_t> mine = draw(64);
    const bool sent = ::write(pipefd[1], mine.data(), mine.size()) == static_cast<ssize_t>(mine.size());
    ::_exit(sent ? 0 : 1);
  }
  ::close(pipefd[1]);
  std::vector<std::uint8_t> childs(64);
  std::size_t got = 0;
  while (got < childs.size()) {
    const ssize_t n = ::read(pipefd[0], childs.data() + got, childs.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == childs.size());
  // Without the wipe, the child's 64 bytes would be exactly the parent's next 64.
  CHECK(draw(64) != childs);
}

TEST_CASE("random bytes: threads draw from their own buffers", "[random]") {
  std::vector<std::uint8_t> a, b;
  std::thread t1([&] { a = draw(256); });
  std::thread t2([&] { b = draw(256); });
  t1.join();
  t2.join();
  CHECK(a != b);
  CHECK(a != std::vector<std::uint8_t>(256, 0));
}

TEST_CASE("random bytes: a draw larger than the buffer comes whole", "[random]") {
  const std::vector<std::uint8_t> big = draw(3 * kRandomBufferBytes + 5);
  std::size_t zeros = 0;
  for (std::uint8_t x : big) zeros += x == 0;
  CHECK(zeros < big.size() / 64);  // about 1/256 of them
}

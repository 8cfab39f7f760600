// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide tables beside the cache: the failure cache (failure_cache.hpp) and the
// upstream claims (upstream_claims.hpp), alone and across forked processes.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <poll.h>

#include "workers/failure_cache.hpp"
#include "workers/upstream_claims.hpp"

using dnsarena::workers::FailureCache;
using dnsarena::workers::FailureKind;
using dnsarena::workers::monotonic_ms;
using dnsarena::workers::UpstreamClaims;

TEST_CASE("failure cache: a window of min, doubled while the name keeps failing, capped, cleared by a success",
          "[workers][failure_cache]") {
  FailureCache f(16, false);
  const std::uint64_t t = monotonic_ms() + 1000;
  const std::uint64_t name = 0x1234567890abcdefull, other = 0xfedcba0987654321ull;
  CHECK_FALSE(f.find(name, t));
  CHECK(f.record(name, FailureKind::timeout, t, 1000, 8000) == 1000);
  REQUIRE(f.find(name, t + 999));
  CHECK(f.find(name, t + 999)->kind == FailureKind::timeout);
  CHECK(f.find(name, t + 999)->remaining_ms == 1);
  CHECK_FALSE(f.find(name, t + 1000));
  CHECK_FALSE(f.find(other, t + 10));
  // Failing again while the window runs keeps it; right after it, doubles; capped.
  CHECK(f.record(name, FailureKind::error, t + 500, 1000, 8000) == 500);
  CHECK(f.record(name, FailureKind::error, t + 1000, 1000, 8000) == 2000);
  CHECK(f.find(name, t + 2999)->kind == FailureKind::error);
  CHECK(f.record(name, FailureKind::error, t + 3000, 1000, 8000) == 4000);
  CHECK(f.record(name, FailureKind::error, t + 7000, 1000, 8000) == 8000);
  CHECK(f.record(name, FailureKind::error, t + 15000, 1000, 8000) == 8000);
  // Long after its last window (more than max) it starts again at min.
  CHECK(f.record(name, FailureKind::timeout, t + 23000 + 8000, 1000, 8000) == 1000);
  f.clear(name);
  CHECK_FALSE(f.find(name, t + 31001));
  CHECK(f.record(name, FailureKind::timeout, t + 31001, 1000, 8000) == 1000);
}

TEST_CASE("failure cache: a full bucket keeps the newest failures and every name finds only its own",
          "[workers][failure_cache]") {
  FailureCache f(1, false);  // one bucket: every name collides
  const std::uint64_t t = monotonic_ms() + 1000;
  for (std::uint64_t n = 1; n <= 20; ++n) f.record(n * 0x9E3779B97F4A7C15ull, FailureKind::timeout, t + n, 100000, 100000);
  unsigned found = 0;
  for (std::uint64_t n = 1; n <= 20; ++n) found += f.find(n * 0x9E3779B97F4A7C15ull, t + 30).has_value();
  CHECK(found == FailureCache::kSlotsPerBucket);
  for (std::uint64_t n = 13; n <= 20; ++n) CHECK(f.find(n * 0x9E3779B97F4A7C15ull, t + 30));
}

TEST_CASE("failure cache: a failure recorded by one process is found by another", "[workers][failure_cache]") {
  FailureCache f(64, true);
  const std::uint64_t name = 42;
  const pid_t child = ::fork();
  if (child == 0) {
    f.record(name, FailureKind::error, monotonic_ms(), 60000, 60000);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  const auto failure = f.find(name, monotonic_ms());
  REQUIRE(failure);
  CHECK(failure->kind == FailureKind::error);
}

namespace {
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}
}  // namespace

TEST_CASE("upstream claims: one owner per question, waiters woken on release, dead owners' claims end",
          "[workers][upstream_claims]") {
  UpstreamClaims c(4, 64, false);
  const std::uint64_t q = 777, now = monotonic_ms();
  UpstreamClaims::Claim mine, theirs;
  REQUIRE(c.claim(q, 0, now, 5000, &mine) == UpstreamClaims::Outcome::claimed);
  REQUIRE(c.claim(q, 1, now, 5000, &theirs) == UpstreamClaims::Outcome::held);
  CHECK(theirs.value == mine.value);
  CHECK(c.holds(theirs, now, 5000));
  REQUIRE(c.wait_on(theirs, 1));
  CHECK_FALSE(readable(c.wake_fd(1)));
  c.release(mine);
  CHECK(readable(c.wake_fd(1)));
  CHECK_FALSE(readable(c.wake_fd(2)));
  CHECK_FALSE(c.holds(theirs, now, 5000));
  CHECK_FALSE(c.wait_on(theirs, 1));  // ended: the waiter resolves at once
  c.drain(1);
  CHECK_FALSE(readable(c.wake_fd(1)));

  SECTION("a claim older than the longest query is taken over") {
    REQUIRE(c.claim(q, 2, now, 5000, &mine) == UpstreamClaims::Outcome::claimed);
    CHECK(c.claim(q, 3, now + 4999, 5000, &theirs) == UpstreamClaims::Outcome::held);
    CHECK(c.claim(q, 3, now + 5001, 5000, &theirs) == UpstreamClaims::Outcome::claimed);
    c.release(mine);  // the old owner's release no longer touches the new claim
    CHECK(c.holds(theirs, now + 5001, 5000));
  }
  SECTION("a replacement worker releases its dead predecessor's claims and wakes their waiters") {
    REQUIRE(c.claim(q, 2, now, 5000, &mine) == UpstreamClaims::Outcome::claimed);
    REQUIRE(c.claim(q, 3, now, 5000, &theirs) == UpstreamClaims::Outcome::held);
    REQUIRE(c.wait_on(theirs, 3));
    c.release_row(2);
    CHECK(readable(c.wake_fd(3)));
    CHECK(c.claim(q, 3, now, 5000, &theirs) == UpstreamClaims::Outcome::claimed);
  }
  SECTION("another question on the same slot is not held up: it goes on its own") {
    UpstreamClaims one(4, 1, false);
    REQUIRE(one.claim(1, 0, now, 5000, &mine) == UpstreamClaims::Outcome::claimed);
    UpstreamClaims::Outcome o = UpstreamClaims::Outcome::claimed;
    for (std::uint64_t other = 2; other < 50 && o != UpstreamClaims::Outcome::unavailable; ++other)
      o = one.claim(other, 1, now, 5000, &theirs);
    CHECK(o == UpstreamClaims::Outcome::unavailable);
  }
}

TEST_CASE("upstream claims: a claim made in a forked worker is seen and released across processes",
          "[workers][upstream_claims]") {
  UpstreamClaims c(2, 64, true);
  int to_child[2], to_parent[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(to_parent) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    UpstreamClaims::Claim mine;
    const bool ok = c.claim(99, 0, monotonic_ms(), 60000, &mine) == UpstreamClaims::Outcome::claimed;
    char b = ok ? 1 : 0;
    [[maybe_unused]] auto w = ::write(to_parent[1], &b, 1);
    [[maybe_unused]] auto r = ::read(to_child[0], &b, 1);  // the parent waits on the claim now
    c.release(mine);
    ::_exit(ok ? 0 : 1);
  }
  char b = 0;
  REQUIRE(::read(to_parent[0], &b, 1) == 1);
  REQUIRE(b == 1);
  UpstreamClaims::Claim theirs;
  REQUIRE(c.claim(99, 1, monotonic_ms(), 60000, &theirs) == UpstreamClaims::Outcome::held);
  REQUIRE(c.wait_on(theirs, 1));
  REQUIRE(::write(to_child[1], &b, 1) == 1);
  pollfd p{c.wake_fd(1), POLLIN, 0};
  CHECK(::poll(&p, 1, 5000) == 1);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(c.holds(theirs, monotonic_ms(), 60000));
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide tables beside the cache: the failure cache (failure_cache.hpp), the
// upstream claims (upstream_claims.hpp), the zones' denials claimed in them
// (denial_claims.hpp) and the answers they fetched (answer_slots.hpp), alone and across
// forked processes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <poll.h>

#include "dnssec/rrset.hpp"
#include "workers/answer_slots.hpp"
#include "workers/denial_claims.hpp"
#include "workers/failure_cache.hpp"
#include "workers/upstream_claims.hpp"

using dnsarena::workers::AnswerSlots;
using dnsarena::workers::DenialClaims;
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

TEST_CASE("upstream claims: peek sees a live claim of its question only, and claims nothing",
          "[workers][claims]") {
  UpstreamClaims c(4, 64, false);
  const std::uint64_t now = monotonic_ms();
  UpstreamClaims::Claim seen, mine;
  CHECK_FALSE(c.peek(7, now, 5000, &seen));
  CHECK_FALSE(c.peek(7, now, 5000, &seen));  // the first peek claimed nothing
  REQUIRE(c.claim(7, 0, now, 5000, &mine) == UpstreamClaims::Outcome::claimed);
  REQUIRE(c.peek(7, now, 5000, &seen));
  CHECK(seen.value == mine.value);
  CHECK(seen.slot == mine.slot);
  CHECK_FALSE(c.peek(7, now + 5001, 5000, &seen));  // past its life
  for (std::uint64_t other = 8; other < 200; ++other) {  // other questions, some in the same slot
    INFO(other);
    CHECK_FALSE(c.peek(other, now, 5000, &seen));
  }
  c.release(mine);
  CHECK_FALSE(c.peek(7, now, 5000, &seen));
}

TEST_CASE("denial claims: a miss finds the claim of the closest claimed zone at or above its name",
          "[workers][claims]") {
  UpstreamClaims table(4, 1024, false);
  DenialClaims one(table, 0, 5000), two(table, 1, 5000);
  const std::uint64_t now = monotonic_ms();
  const auto name = dnsarena::dnssec::name_from_text("a.b.example.test.");
  CHECK_FALSE(two.held_above(name, now));
  const UpstreamClaims::Claim zone = one.claim(dnsarena::dnssec::name_from_text("example.test."), now);
  REQUIRE(zone.value != 0);
  CHECK(one.claim(dnsarena::dnssec::name_from_text("example.test."), now).value == 0);  // held: one per zone
  const auto found = two.held_above(name, now);
  REQUIRE(found);
  CHECK(found->value == zone.value);
  CHECK(two.held_above(dnsarena::dnssec::name_from_text("example.test."), now));  // the apex itself
  CHECK_FALSE(two.held_above(dnsarena::dnssec::name_from_text("other.test."), now));
  CHECK_FALSE(two.held_above(dnsarena::dnssec::name_from_text("test."), now));  // above the zone
  CHECK_FALSE(two.held_above(dnsarena::dnssec::name_from_text("xample.test."), now));  // a suffix, not a label
  // The closest: a claim below wins over one above.
  const UpstreamClaims::Claim deeper = two.claim(dnsarena::dnssec::name_from_text("b.example.test."), now);
  REQUIRE(deeper.value != 0);
  CHECK(one.held_above(name, now)->value == deeper.value);
  // Its waiters are woken by the release (row 1 waits here on row 0's claim).
  REQUIRE(table.wait_on(*found, 1));
  one.release(zone);
  pollfd p{table.wake_fd(1), POLLIN, 0};
  CHECK(::poll(&p, 1, 1000) == 1);
  CHECK(two.held_above(dnsarena::dnssec::name_from_text("www.example.test."), now) == std::nullopt);
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

namespace {

// An entry of `len` bytes, each the low byte of `seed` plus its index: a copy torn
// between two entries cannot pass for either.
std::vector<std::uint8_t> pattern(std::uint64_t seed, std::size_t len) {
  std::vector<std::uint8_t> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<std::uint8_t>(seed + (seed >> 32) * 101 + i);
  return v;
}

}  // namespace

TEST_CASE("answer slots: a claim's answer is read back only for that claim, and bounded",
          "[workers][answer_slots]") {
  AnswerSlots slots(4, false);
  CHECK(slots.slots() == 4);
  const std::uint64_t now = monotonic_ms();
  const UpstreamClaims::Claim a{1, 0xA1}, b{5, 0xB5};  // slot 1 of 4 both
  std::vector<std::uint8_t> out(AnswerSlots::kCapacity);
  std::uint8_t scope = 0;
  CHECK(slots.read(a, out, &scope) == 0);  // nothing published
  const auto entry = pattern(0xA1, 301);
  REQUIRE(slots.publish(a, 24, entry, now));
  REQUIRE(slots.read(a, out, &scope) == entry.size());
  CHECK(scope == 24);
  CHECK(std::equal(entry.begin(), entry.end(), out.begin()));
  CHECK(slots.read(b, out, &scope) == 0);                             // another claim: not its answer
  CHECK(slots.read(UpstreamClaims::Claim{2, 0xA1}, out, &scope) == 0);  // same word, other claims slot
  // The next claim on the slot replaces it; the first claim's waiters then find nothing.
  REQUIRE(slots.publish(b, 0, pattern(0xB5, 40), now));
  CHECK(slots.read(a, out, &scope) == 0);
  CHECK(slots.read(b, out, &scope) == 40);
  // Bounds: larger than a slot, or empty, is not published; a short buffer reads nothing.
  CHECK_FALSE(slots.publish(a, 0, pattern(1, AnswerSlots::kCapacity + 1), now));
  CHECK(slots.publish(a, 0, pattern(1, AnswerSlots::kCapacity), now));
  CHECK_FALSE(slots.publish(b, 0, {}, now));
  std::vector<std::uint8_t> small(100);
  CHECK(slots.read(a, small, &scope) == 0);
  CHECK_FALSE(slots.publish(UpstreamClaims::Claim{1, 0}, 0, entry, now));  // no claim
}

TEST_CASE("answer slots: readers in one process never take a copy torn by writers in others",
          "[workers][answer_slots]") {
  AnswerSlots slots(1, true);  // every claim on the one slot: writers collide constantly
  std::vector<pid_t> writers;
  for (std::uint64_t w = 1; w <= 2; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::uint64_t until = monotonic_ms() + 300;
      for (std::uint64_t k = 0; monotonic_ms() < until; ++k) {
        const UpstreamClaims::Claim c{0, w << 32 | (k & 0xFF)};
        slots.publish(c, static_cast<std::uint8_t>(c.value), pattern(c.value, 64 + (k * 37) % 3000), monotonic_ms());
      }
      ::_exit(0);
    }
    writers.push_back(pid);
  }
  std::vector<std::uint8_t> out(AnswerSlots::kCapacity);
  std::uint64_t taken = 0, bad = 0;
  const std::uint64_t until = monotonic_ms() + 300;
  for (std::uint64_t k = 0; monotonic_ms() < until; ++k) {
    const UpstreamClaims::Claim c{0, (1 + k % 2) << 32 | (k & 0xFF)};
    std::uint8_t scope = 0;
    const std::size_t n = slots.read(c, out, &scope);
    if (n == 0) continue;
    ++taken;
    const auto want = pattern(c.value, n);
    if (scope != static_cast<std::uint8_t>(c.value) || !std::equal(want.begin(), want.end(), out.begin())) ++bad;
  }
  for (pid_t pid : writers) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
  }
  CHECK(bad == 0);
  INFO("copies taken: " << taken);
}

TEST_CASE("answer slots: a writer killed mid-write holds its slot only until the write is stale",
          "[workers][answer_slots]") {
  AnswerSlots slots(1, true);
  // A writer publishing without pause, killed at some point of its copy.
  int started[2];
  REQUIRE(::pipe(started) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const auto entry = pattern(1, AnswerSlots::kCapacity);
    slots.publish({0, 1}, 0, entry, monotonic_ms());
    const char b = 1;
    [[maybe_unused]] auto w = ::write(started[1], &b, 1);
    for (std::uint64_t k = 2;; ++k) slots.publish({0, k}, 0, entry, monotonic_ms());
  }
  char b = 0;
  REQUIRE(::read(started[0], &b, 1) == 1);  // it publishes without pause from here on
  REQUIRE(::kill(pid, SIGKILL) == 0);
  std::vector<std::uint8_t> out(AnswerSlots::kCapacity);
  std::uint8_t scope = 0;
  REQUIRE(::waitpid(pid, nullptr, 0) == pid);
  const std::uint64_t now = monotonic_ms();
  const UpstreamClaims::Claim next{0, 1ull << 40};
  const auto entry = pattern(7, 500);
  // Either the slot was left between writes (taken at once) or mid-write (taken once the
  // write is older than kStaleWriteMs); never for good.
  const bool at_once = slots.publish(next, 9, entry, now);
  if (!at_once) REQUIRE(slots.publish(next, 9, entry, now + AnswerSlots::kStaleWriteMs + 1));
  REQUIRE(slots.read(next, out, &scope) == entry.size());
  CHECK(scope == 9);
  CHECK(std::equal(entry.begin(), entry.end(), out.begin()));
}

// SPDX-License-Identifier: GPL-3.0-or-later
// The host's rate-limit table (workers/rate_limit_table.hpp) and the limiter over it:
// the documented word layout, the window rules, the verdicts, and exact counting by
// several processes at once on one shared table (the host-wide rate).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <chrono>
#include <thread>
#include <vector>

#include "common/shared_anonymous.hpp"
#include "workers/rate_limit_table.hpp"
#include "workers/rate_limiter.hpp"

using dnsarena::workers::RateLimitConfig;
using dnsarena::workers::RateLimiter;
using dnsarena::workers::RateLimitTable;

namespace {

sockaddr_storage v4(const char* text) {
  sockaddr_storage ss{};
  auto* a = reinterpret_cast<sockaddr_in*>(&ss);
  a->sin_family = AF_INET;
  REQUIRE(::inet_pton(AF_INET, text, &a->sin_addr) == 1);
  return ss;
}

sockaddr_storage v6(const char* text) {
  sockaddr_storage ss{};
  auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
  a->sin6_family = AF_INET6;
  REQUIRE(::inet_pton(AF_INET6, text, &a->sin6_addr) == 1);
  return ss;
}

// A hash that lands in bucket `bucket` with tag `tag` (tag in the top 22 bits).
std::uint64_t hash_for(std::uint32_t tag, std::uint64_t bucket) { return std::uint64_t{tag} << 42 | bucket; }

}  // namespace

TEST_CASE("rate-limit table: the bucket word's documented bit layout", "[rrl][layout]") {
  const std::uint64_t w = RateLimitTable::pack(0x2ABCDE, 0xBEEF, 0x1234567);
  CHECK(w >> 42 == 0x2ABCDE);                 // bits 63..42: tag
  CHECK((w >> 26 & 0xFFFF) == 0xBEEF);        // bits 41..26: second
  CHECK((w & 0x3FFFFFF) == 0x1234567);        // bits 25..0: count
  CHECK(RateLimitTable::tag_of(w) == 0x2ABCDE);
  CHECK(RateLimitTable::second_of(w) == 0xBEEF);
  CHECK(RateLimitTable::count_of(w) == 0x1234567);
  CHECK(RateLimitTable::pack(0, 0x1BEEF, 0) == RateLimitTable::pack(0, 0xBEEF, 0));  // the second's low 16 bits
  CHECK(RateLimitTable::kCountMax == (1u << 26) - 1);
  CHECK(sizeof(RateLimitTable::Header) == 64);
  RateLimitTable t(1000, false);
  CHECK(t.buckets() == 1024);
  CHECK(RateLimitTable::rounded(0) == 1);
  CHECK(RateLimitTable::rounded(65536) == 65536);
  CHECK(RateLimitTable::rounded(65537) == 131072);
}

TEST_CASE("rate-limit table: counts per subnet and second, and a later second or another subnet resets", "[rrl]") {
  RateLimitTable t(16, false);
  const std::uint64_t a = hash_for(7, 3), b = hash_for(9, 3), c = hash_for(7, 4);
  CHECK(t.count(a, 1000) == 1);
  CHECK(t.count(a, 1000) == 2);
  CHECK(t.count(c, 1000) == 1);  // another bucket
  CHECK(t.count(a, 1000) == 3);
  CHECK(t.count(a, 1001) == 1);  // a new window
  CHECK(t.count(a, 1001) == 2);
  // A worker whose clock is up to kClockSkewSeconds behind counts into the newer window.
  CHECK(t.count(a, 1000) == 3);
  CHECK(t.count(a, 1001 - RateLimitTable::kClockSkewSeconds) == 4);
  CHECK(t.count(a, 1001 - RateLimitTable::kClockSkewSeconds - 1) == 1);  // further back: a reset
  // Another subnet in the same bucket takes it (limiting weaker, never stronger).
  CHECK(t.count(b, 998) == 1);
  CHECK(t.count(a, 998) == 1);
  CHECK(t.count(b, 998) == 1);
  // Seconds compare modulo 2^16.
  CHECK(t.count(a, 0xFFFF) == 1);
  CHECK(t.count(a, 0x10000) == 1);
  CHECK(t.count(a, 0xFFFF) == 2);  // one second behind 0x10000 (its low bits 0)
}

TEST_CASE("rate limiter: the rate, slip and prefixes as configured", "[rrl]") {
  RateLimitConfig cfg;
  cfg.responses_per_second = 5;
  cfg.slip = 2;
  cfg.table_size = 64;
  RateLimiter rl(cfg);
  REQUIRE(rl.enabled());
  using V = RateLimiter::Verdict;
  std::vector<V> got;
  for (int i = 0; i < 9; ++i) got.push_back(rl.check(v4(i % 2 ? "10.1.2.3" : "10.1.2.250"), 5000));  // one /24
  CHECK(got == std::vector<V>{V::answer, V::answer, V::answer, V::answer, V::answer, V::drop, V::slip, V::drop,
                              V::slip});
  CHECK(rl.check(v4("10.1.3.1"), 5000) == V::answer);  // another /24
  CHECK(rl.check(v4("10.1.2.3"), 5001) == V::answer);  // the next second
  // IPv6: /56 by default; an IPv4-mapped address counts as its IPv4 subnet.
  for (int i = 0; i < 5; ++i) CHECK(rl.check(v6("2001:db8:0:1200::1"), 5000) == V::answer);
  CHECK(rl.check(v6("2001:db8:0:12ff::2"), 5000) == V::drop);
  CHECK(rl.check(v6("2001:db8:0:1300::1"), 5000) == V::answer);
  CHECK(rl.check(v6("::ffff:10.1.3.7"), 5000) == V::answer);  // 10.1.3.0/24's second answer
  cfg.slip = 0;
  RateLimiter no_slip(cfg);
  for (int i = 0; i < 5; ++i) CHECK(no_slip.check(v4("192.0.2.1"), 1) == V::answer);
  for (int i = 0; i < 6; ++i) CHECK(no_slip.check(v4("192.0.2.1"), 1) == V::drop);
  cfg.responses_per_second = 0;
  RateLimiter off(cfg);
  CHECK_FALSE(off.enabled());
  CHECK(off.check(v4("192.0.2.1"), 1) == V::answer);
}

TEST_CASE("rate-limit table: processes counting at once on one shared table count every answer once",
          "[rrl][multiprocess]") {
  constexpr unsigned kProcs = 4, kChecks = 50000, kRate = 30000;
  RateLimitTable table(1024, true);
  struct Tally {
    std::atomic<unsigned> answered[kProcs];
    std::atomic<unsigned> limited[kProcs];
  };
  dnsarena::common::SharedAnonymous<Tally> tally;
  RateLimitConfig cfg;
  cfg.responses_per_second = kRate;
  cfg.slip = 0;
  std::vector<pid_t> kids;
  for (unsigned p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      RateLimiter rl(cfg, &table);  // the parent's table, inherited
      unsigned answered = 0, limited = 0;
      for (unsigned i = 0; i < kChecks; ++i) {
        if (rl.check(v4("198.51.100.7"), 777) == RateLimiter::Verdict::answer) ++answered;
        else ++limited;
      }
      tally->answered[p] = answered;
      tally->limited[p] = limited;
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (const pid_t pid : kids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
  }
  unsigned answered = 0, limited = 0;
  for (unsigned p = 0; p < kProcs; ++p) {
    answered += tally->answered[p];
    limited += tally->limited[p];
  }
  // Exactly the rate for the host, not kProcs times it.
  CHECK(answered == kRate);
  CHECK(limited == kProcs * kChecks - kRate);
  RateLimiter parent(cfg, &table);
  CHECK(parent.check(v4("198.51.100.200"), 777) == RateLimiter::Verdict::drop);
}

TEST_CASE("rate-limit table: a process killed while counting leaves a table the others keep using",
          "[rrl][multiprocess]") {
  RateLimitTable table(1, true);  // one bucket: every count is on the word the victim updates
  const std::uint64_t h = hash_for(5, 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (std::uint32_t s = 0;; ++s)
      for (int i = 0; i < 1000; ++i) table.count(h, s);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(::kill(pid, SIGKILL) == 0);
  REQUIRE(::waitpid(pid, nullptr, 0) == pid);
  // Nothing is held: the next counts go on at once, in a fresh window and in the current one.
  const std::uint32_t now = 0x7FFFFFF0;
  CHECK(table.count(h, now) == 1);
  CHECK(table.count(h, now) == 2);
  CHECK(table.count(hash_for(6, 0), now) == 1);
}

TEST_CASE("rate-limit table: a reload keeps the host's table unless its size changes", "[rrl]") {
  using dnsarena::workers::host_rate_limit_table;
  RateLimitConfig cfg;
  CHECK(host_rate_limit_table(cfg, nullptr) == nullptr);  // off: no table
  cfg.responses_per_second = 10;
  cfg.table_size = 1000;
  std::unique_ptr<RateLimitTable> t = host_rate_limit_table(cfg, nullptr);
  REQUIRE(t);
  CHECK(t->buckets() == 1024);
  CHECK(t->count(hash_for(1, 1), 50) == 1);
  const RateLimitTable* first = t.get();
  cfg.responses_per_second = 20;  // a new rate, prefixes or slip: the counts go on
  cfg.ipv4_prefix = 16;
  cfg.table_size = 1024;
  t = host_rate_limit_table(cfg, std::move(t));
  CHECK(t.get() == first);
  CHECK(t->count(hash_for(1, 1), 50) == 2);
  cfg.responses_per_second = 0;  // off: kept for a later reload that turns it on
  t = host_rate_limit_table(cfg, std::move(t));
  CHECK(t.get() == first);
  cfg.responses_per_second = 20;
  cfg.table_size = 4096;  // a new size: a new, empty table
  t = host_rate_limit_table(cfg, std::move(t));
  REQUIRE(t);
  CHECK(t->buckets() == 4096);
  CHECK(t->count(hash_for(1, 1), 50) == 1);
}

// SPDX-License-Identifier: GPL-3.0-or-later
// workers/authority_rate.hpp: queries per second to one authoritative address, counted
// per address (and port) and per wall-clock second, shared by processes forked from the
// table's maker; 0 is no bound.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "recursion/delegation.hpp"
#include "workers/authority_rate.hpp"
#include "workers/rate_limit_table.hpp"

using dnsarena::recursion::ServerAddress;
using dnsarena::workers::AuthorityRate;
using dnsarena::workers::RateLimitTable;

TEST_CASE("authority rate: the rate per second per address, each address and port apart", "[authority-rate]") {
  AuthorityRate rate(nullptr, 3);
  const ServerAddress a = *ServerAddress::parse("192.0.2.1");
  const ServerAddress b = *ServerAddress::parse("192.0.2.2");
  const ServerAddress a_other_port = *ServerAddress::parse("192.0.2.1", 5353);
  for (int i = 0; i < 3; ++i) CHECK(rate.admit(a, 1000));
  CHECK_FALSE(rate.admit(a, 1000));
  CHECK_FALSE(rate.admit(a, 1000));
  CHECK(rate.admit(b, 1000));
  CHECK(rate.admit(a_other_port, 1000));
  CHECK(rate.admit(a, 1001));  // a new second, a new window
}

TEST_CASE("authority rate: 0 is no bound", "[authority-rate]") {
  AuthorityRate rate(nullptr, 0);
  const ServerAddress a = *ServerAddress::parse("192.0.2.1");
  for (int i = 0; i < 10000; ++i) REQUIRE(rate.admit(a, 1000));
}

TEST_CASE("authority rate: processes sharing the host table share the bound", "[authority-rate]") {
  RateLimitTable host(AuthorityRate::kBuckets, true);
  const ServerAddress a = *ServerAddress::parse("192.0.2.1");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    AuthorityRate theirs(&host, 10);
    int admitted = 0;
    for (int i = 0; i < 6; ++i) admitted += theirs.admit(a, 5000);
    ::_exit(admitted == 6 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  AuthorityRate mine(&host, 10);
  int admitted = 0;
  for (int i = 0; i < 6; ++i) admitted += mine.admit(a, 5000);
  CHECK(admitted == 4);  // the child's 6 and these 4 make the second's 10
}

// SPDX-License-Identifier: GPL-3.0-or-later
// ECS per RFC 7871: what may be cached, for whom, and what a /0
// source means; the scope returned is the scope of the answer given.
#include <catch2/catch.hpp>

#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

TEST_CASE("ECS: a scope longer than the source answers the client but is not cached for the source's network",
          "[serve][ecs]") {
  Service s({"--ecs", "forward"});
  // The upstream scopes ecs.test. to /24; the client sends only a /16.
  const DnsReply first = udp_exchange(s.port, make_ecs_query(1, "ecs.test", 1, 16, {203, 0, 0, 0}));
  REQUIRE(first.answered);
  CHECK(first.rcode() == 0);
  CHECK(first.ecs_scope == 24);  // passed on as the server said
  const DnsReply other = udp_exchange(s.port, make_ecs_query(2, "ecs.test", 1, 16, {203, 0, 77, 0}));
  REQUIRE(other.answered);
  CHECK(s.upstream.queries() == 2);  // not answered from a /16-wide entry
}

TEST_CASE("ECS: an answer to a /0 source serves only /0 queries, never clients that sent an address",
          "[serve][ecs]") {
  Service s({"--ecs", "forward"});
  const DnsReply zero = udp_exchange(s.port, make_ecs_query(1, "ecs.test", 1, 0, {0, 0, 0, 0}));
  REQUIRE(zero.answered);
  CHECK(zero.ecs_scope == 0);
  const DnsReply zero_again = udp_exchange(s.port, make_ecs_query(2, "ecs.test", 1, 0, {0, 0, 0, 0}));
  REQUIRE(zero_again.answered);
  CHECK(s.upstream.queries() == 1);  // the /0 answer serves another /0 query
  const DnsReply tailored = udp_exchange(s.port, make_ecs_query(3, "ecs.test", 1, 24, {10, 9, 8, 0}));
  REQUIRE(tailored.answered);
  CHECK(s.upstream.queries() == 2);  // but not a client with an address
  CHECK(tailored.ecs_scope == 24);
  REQUIRE(tailored.answers.size() == 1);
  CHECK(tailored.answers[0] == "1 0a090801");  // 10.9.8.1: the answer for its own /24
}

TEST_CASE("ECS: replies carry the scope of the entry that answered, miss and hit", "[serve][ecs]") {
  Service s({"--ecs", "forward"});
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    const DnsReply tailored = udp_exchange(s.port, make_ecs_query(1, "ecs.test", 1, 24, {10, 1, 2, 0}));
    REQUIRE(tailored.answered);
    CHECK(tailored.ecs_scope == 24);
    const DnsReply shared = udp_exchange(s.port, make_ecs_query(2, "a.test", 1, 24, {10, 1, 2, 0}));
    REQUIRE(shared.answered);
    CHECK(shared.ecs_scope == 0);
  }
  CHECK(s.upstream.queries() == 2);
  // The shared answer (scope 0) serves another subnet without asking again.
  const DnsReply other = udp_exchange(s.port, make_ecs_query(3, "a.test", 1, 24, {10, 7, 7, 0}));
  CHECK(other.ecs_scope == 0);
  CHECK(s.upstream.queries() == 2);
}

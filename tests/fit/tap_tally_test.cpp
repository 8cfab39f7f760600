// SPDX-License-Identifier: GPL-3.0-or-later
// The per-name tally (sim/fit/tap_tally.hpp): the answer shape kept for a name is the
// upstream's when one was captured (its TTL as the authority gave it), else the earliest
// client answer (a later hit's TTL is counted down); names are merged across case; queries
// count per type bucket with their ECS subnets.
#include <catch2/catch.hpp>

#include "common/bytes.hpp"
#include "sim/fit/tap_tally.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena;
using common::Bytes;

namespace {

// A response to `name` A with `records` A records of `ttl` (or a query when records < 0).
Bytes message(const std::string& name, int records, std::uint32_t ttl = 0) {
  Bytes m;
  common::append_u16(m, 1);
  common::append_u16(m, records < 0 ? 0x0100 : 0x8180);
  common::append_u16(m, 1);
  common::append_u16(m, records < 0 ? 0 : static_cast<std::uint16_t>(records));
  common::append_u16(m, 0);
  common::append_u16(m, 0);
  m += wire::name_to_wire(name);
  common::append_u16(m, 1);
  common::append_u16(m, 1);
  for (int i = 0; i < records; ++i) {
    common::append_u16(m, 0xC00C);
    common::append_u16(m, 1);
    common::append_u16(m, 1);
    common::append_u16(m, static_cast<std::uint16_t>(ttl >> 16));
    common::append_u16(m, static_cast<std::uint16_t>(ttl));
    common::append_u16(m, 4);
    m += Bytes{10, 0, 0, static_cast<std::uint8_t>(i)};
  }
  return m;
}

sim::fit::TapMessage tap(sim::fit::TapType type, std::uint64_t second, const Bytes& wire) {
  return {type, second * 1'000'000'000ull, wire};
}

}  // namespace

TEST_CASE("tally: the upstream's answer gives a name its shape and TTL, else the earliest", "[fit][tally]") {
  using sim::fit::TapType;
  sim::fit::TapTally t;
  const Bytes hit = message("www.Example.", 1, 100);      // a hit 200 s after the miss
  const Bytes miss = message("www.example.", 2, 300);     // the answer the miss got
  t.add(tap(TapType::client_query, 10, message("www.example.", -1)));
  t.add(tap(TapType::client_response, 210, hit));
  t.add(tap(TapType::client_response, 10, miss));
  REQUIRE(t.names.size() == 1);
  const sim::fit::NameTally& n = t.names.begin()->second;
  CHECK(n.queries == 1);
  CHECK(n.by_bucket[sim::fit::kBucketA] == 1);
  CHECK(n.shape.ttl == 300);  // the earliest client answer
  CHECK(n.shape.records == 2);
  CHECK_FALSE(n.shape.from_upstream);

  sim::fit::TapTally u;
  u.add(tap(TapType::client_response, 10, miss));
  // The upstream's answer (0x20 case) beats any client answer, even an earlier one.
  u.add(tap(TapType::forwarder_response, 11, message("WWW.EXAMPLE.", 3, 250)));
  u.add(tap(TapType::client_response, 5, message("www.example.", 1, 20)));
  REQUIRE(u.names.size() == 1);
  const sim::fit::NameTally& m = u.names.begin()->second;
  CHECK(m.shape.from_upstream);
  CHECK(m.shape.ttl == 250);
  CHECK(m.shape.records == 3);
  CHECK(m.positive_buckets == 1u << sim::fit::kBucketA);
  CHECK(u.forwarder_responses == 1);
  CHECK(u.client_responses == 2);
}

TEST_CASE("tally: unparsable messages are counted, not tallied", "[fit][tally]") {
  sim::fit::TapTally t;
  const Bytes junk = {1, 2, 3};
  t.add({sim::fit::TapType::client_query, 1, junk});
  CHECK(t.unparsable == 1);
  CHECK(t.names.empty());
  CHECK(t.client_queries == 0);
}

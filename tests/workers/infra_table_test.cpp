// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide infrastructure table (workers/infra_table.hpp): the documented layout in
// bytes, RTT smoothing, timeouts and their backoff, EDNS status and its fallback after
// timeouts, lameness per zone, the rank built from them; bounds (a tiny table flooded
// with addresses only evicts), expiry after kHostTtlS; and torn records: a forged slot,
// a slot left mid-write, and a writer killed -9 among readers in another process. Then
// what the recursive client builds on it: the EDNS fallback decisions
// (authority_outcomes.hpp) and the state machine's view (infra_ranking.hpp).
#include <netinet/in.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>

#include "common/monotonic_clock.hpp"
#include "dnssec/rrset.hpp"
#include "recursion/delegation.hpp"
#include "tests/workers/endless_writer.hpp"
#include "workers/authority_outcomes.hpp"
#include "workers/infra_ranking.hpp"
#include "workers/infra_table.hpp"

using dnsarena::workers::InfraKey;
using dnsarena::workers::InfraTable;
using dnsarena::workers::ReplyUse;

namespace {

InfraKey v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint16_t port = 53) {
  InfraKey k;
  k.family = AF_INET;
  k.address[0] = a, k.address[1] = b, k.address[2] = c, k.address[3] = d;
  k.port = port;
  return k;
}

// The index of the slot holding `k`'s host record, found in the raw bytes (-1: none).
long slot_of(const InfraTable& t, const InfraKey& k) {
  const auto raw = t.raw_for_tests();
  for (std::size_t i = 0; i < t.capacity(); ++i) {
    const std::uint8_t* rec = raw.data() + 64 + 64 * i + 16;
    std::uint64_t zone = 0;
    std::memcpy(&zone, rec + 16, 8);
    if (std::memcmp(rec, k.address.data(), 16) == 0 && rec[26] == k.family && zone == 0) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

TEST_CASE("infra table: the documented layout in bytes", "[workers][infra]") {
  InfraTable t(3, false);  // rounded up to 4 buckets
  CHECK(t.buckets() == 4);
  CHECK(t.capacity() == 4 * InfraTable::kWays);
  CHECK(t.raw_for_tests().size() == 64 + 64 * t.capacity());
  const std::uint64_t now = dnsarena::common::monotonic_ms();
  const InfraKey k = v4(192, 0, 2, 7, 5353);
  t.replied(k, 8000, InfraTable::Edns::works, now);
  const long i = slot_of(t, k);
  REQUIRE(i >= 0);
  const std::uint8_t* s = t.raw_for_tests().data() + 64 + 64 * i;
  std::uint64_t seq = 0;
  std::memcpy(&seq, s, 8);
  CHECK(seq % 2 == 0);  // not being written
  CHECK(seq != 0);      // written once
  std::uint16_t port = 0;
  std::memcpy(&port, s + 16 + 24, 2);
  CHECK(port == 5353);
  CHECK(s[16 + 26] == AF_INET);
  CHECK(s[16 + 27] == 1);  // edns works
  std::uint32_t srtt = 0, rttvar = 0, expires = 0;
  std::memcpy(&srtt, s + 16 + 32, 4);
  std::memcpy(&rttvar, s + 16 + 36, 4);
  std::memcpy(&expires, s + 16 + 40, 4);
  CHECK(srtt == 8000);
  CHECK(rttvar == 4000);
  CHECK(expires >= InfraTable::kHostTtlS);
  std::uint32_t buckets = 0, ways = 0;
  std::memcpy(&buckets, t.raw_for_tests().data() + 16, 4);
  std::memcpy(&ways, t.raw_for_tests().data() + 20, 4);
  CHECK(buckets == 4);
  CHECK(ways == InfraTable::kWays);
}

TEST_CASE("infra table: RTT, timeouts with backoff, EDNS and lameness make the rank", "[workers][infra]") {
  InfraTable t(16, false);
  const std::uint64_t now = dnsarena::common::monotonic_ms();
  const InfraKey fast = v4(10, 0, 0, 1), slow = v4(10, 0, 0, 2), silent = v4(10, 0, 0, 3), fresh = v4(10, 0, 0, 4);
  const std::uint64_t zone = 0x1234;
  CHECK_FALSE(t.host(fresh, now).known);
  CHECK(t.rank(fresh, zone, now) == InfraTable::kUnknownRankUs);
  t.replied(fast, 1000, InfraTable::Edns::unknown, now);
  t.replied(fast, 2000, InfraTable::Edns::unknown, now);  // RFC 6298: 1000 + (2000-1000)/8, (3*500 + 1000)/4
  CHECK(t.host(fast, now).srtt_us == 1125);
  CHECK(t.host(fast, now).rttvar_us == 625);
  CHECK(t.rank(fast, zone, now) == 1125 + 4 * 625);
  t.replied(slow, 100000, InfraTable::Edns::unknown, now);
  CHECK(t.rank(fast, zone, now) < t.rank(slow, zone, now));
  // A timeout: behind every server with an RTT, for kBackoffInitialMs, then doubling.
  t.timed_out(silent, true, now);
  CHECK(t.host(silent, now).backing_off);
  CHECK(t.rank(silent, zone, now) > t.rank(slow, zone, now));
  CHECK(t.rank(silent, zone, now) > InfraTable::kUnknownRankUs);
  CHECK_FALSE(t.host(silent, now + InfraTable::kBackoffInitialMs).backing_off);
  CHECK(t.rank(silent, zone, now + InfraTable::kBackoffInitialMs) == InfraTable::kUnknownRankUs);  // probed again
  t.timed_out(silent, true, now);
  CHECK(t.host(silent, now).timeouts == 2);
  CHECK(t.host(silent, now + InfraTable::kBackoffInitialMs).backing_off);
  CHECK_FALSE(t.host(silent, now + 2 * InfraTable::kBackoffInitialMs).backing_off);
  for (int i = 0; i < 300; ++i) t.timed_out(silent, true, now);
  CHECK(t.host(silent, now).timeouts == 255);  // saturates
  CHECK(t.host(silent, now + InfraTable::kBackoffMaxMs - 1).backing_off);
  CHECK_FALSE(t.host(silent, now + InfraTable::kBackoffMaxMs).backing_off);
  // Two EDNS timeouts while EDNS is unknown: the next query goes without.
  CHECK_FALSE(t.use_edns(silent, now));
  // A reply clears the timeouts and the backoff.
  t.replied(silent, 0, InfraTable::Edns::unknown, now);
  CHECK(t.host(silent, now).timeouts == 0);
  CHECK_FALSE(t.host(silent, now).backing_off);
  CHECK(t.use_edns(silent, now));
  CHECK_FALSE(t.host(silent, now).sampled);  // a TCP reply: no sample
  // EDNS known to work: timeouts do not take it away.
  t.replied(fast, 1000, InfraTable::Edns::works, now);
  t.timed_out(fast, true, now);
  t.timed_out(fast, true, now);
  CHECK(t.use_edns(fast, now));
  // Broken: no EDNS at once.
  t.replied(slow, 0, InfraTable::Edns::broken, now);
  CHECK_FALSE(t.use_edns(slow, now));
  CHECK(t.host(slow, now).edns == InfraTable::Edns::broken);
  CHECK(t.host(slow, now).sampled);  // its RTT kept
  // Lame for one zone only: last for that zone, as before for the others.
  t.mark_lame(fast, zone, now);
  CHECK(t.lame(fast, zone, now));
  CHECK_FALSE(t.lame(fast, zone + 2, now));
  CHECK(t.rank(fast, zone, now) == InfraTable::kLameRank);
  CHECK(t.rank(fast, zone + 2, now) == InfraTable::kBackoffRank + 2);  // its timeouts alone
  const InfraTable::Stats st = t.stats(now);
  CHECK(st.capacity == t.capacity());
  CHECK(st.hosts == 3);
  CHECK(st.lame == 1);
  CHECK(st.edns_broken == 1);
  CHECK(st.backing_off == 1);  // fast, after its two timeouts
  CHECK(st.evictions == 0);
}

TEST_CASE("infra table: a flood of addresses only evicts, and records expire after the host TTL", "[workers][infra]") {
  InfraTable t(1, false);  // one bucket: kWays records
  const std::uint64_t now = dnsarena::common::monotonic_ms();
  for (std::uint32_t n = 1; n <= 1000; ++n) {
    t.replied(v4(10, 1, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)), n * 10,
              InfraTable::Edns::unknown, now + n);
  }
  InfraTable::Stats st = t.stats(now + 1000);
  CHECK(st.capacity == InfraTable::kWays);
  CHECK(st.hosts == InfraTable::kWays);
  CHECK(st.inserts == 1000);
  CHECK(st.evictions == 1000 - InfraTable::kWays);
  // What is held reads back right (the table evicts the record made first, by second).
  unsigned held = 0;
  for (std::uint32_t n = 1; n <= 1000; ++n) {
    const InfraTable::Host h = t.host(v4(10, 1, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)), now + 1000);
    if (!h.known) continue;
    ++held;
    CHECK(h.srtt_us == n * 10);
  }
  CHECK(held == InfraTable::kWays);
  // Expiry: kHostTtlS after it was made; updates do not extend it.
  InfraTable e(4, false);
  const InfraKey k = v4(192, 0, 2, 1);
  e.replied(k, 500, InfraTable::Edns::broken, now);
  e.replied(k, 500, InfraTable::Edns::broken, now + (InfraTable::kHostTtlS - 10) * 1000);
  CHECK(e.host(k, now + (InfraTable::kHostTtlS - 2) * 1000).known);
  CHECK_FALSE(e.host(k, now + (InfraTable::kHostTtlS + 1) * 1000).known);
  CHECK(e.use_edns(k, now + (InfraTable::kHostTtlS + 1) * 1000));  // tried afresh
  CHECK(e.stats(now + (InfraTable::kHostTtlS + 1) * 1000).hosts == 0);
  // An expired record is made afresh in its slot (no eviction counted).
  e.replied(k, 900, InfraTable::Edns::unknown, now + (InfraTable::kHostTtlS + 1) * 1000);
  CHECK(e.host(k, now + (InfraTable::kHostTtlS + 1) * 1000).srtt_us == 900);
  CHECK(e.stats(now + (InfraTable::kHostTtlS + 1) * 1000).evictions == 0);
}

TEST_CASE("infra table: a forged or half-written slot is not trusted", "[workers][infra]") {
  InfraTable t(1, false);  // one bucket: every key below shares it
  const std::uint64_t now = dnsarena::common::monotonic_ms();
  const InfraKey k = v4(192, 0, 2, 9);
  t.replied(k, 0, InfraTable::Edns::broken, now);
  REQUIRE_FALSE(t.use_edns(k, now));
  const long i = slot_of(t, k);
  REQUIRE(i >= 0);
  std::uint8_t* s = t.raw_for_tests().data() + 64 + 64 * i;
  // A forged byte (the EDNS status set to works) without the checksum: not read.
  s[16 + 27] = 1;
  CHECK_FALSE(t.host(k, now).known);
  CHECK(t.use_edns(k, now));  // what an unknown server gets
  s[16 + 27] = 2;
  CHECK(t.host(k, now).edns == InfraTable::Edns::broken);
  // A writer killed mid-write leaves seq odd: nothing read from the slot.
  std::uint64_t seq = 0;
  std::memcpy(&seq, s, 8);
  std::uint64_t base_ms = 0;
  std::memcpy(&base_ms, t.raw_for_tests().data() + 8, 8);
  const std::uint64_t rel = now - base_ms;  // its start (now), ms after the table's base
  const std::uint64_t odd = rel << 32 | (seq & 0xFFFFFFFFull) | 1;
  std::memcpy(s, &odd, 8);
  s[16 + 27] = 1;  // and its half-written record
  CHECK_FALSE(t.host(k, now).known);
  // The other slots fill; a new server then takes the slot of the record made first (an
  // eviction) rather than the held one, which nobody takes before kStaleWriteMs.
  for (std::uint8_t n = 1; n < InfraTable::kWays; ++n) t.replied(v4(10, 3, 0, n), 50, InfraTable::Edns::works, now);
  const InfraKey late = v4(10, 3, 1, 1);
  t.replied(late, 100, InfraTable::Edns::unknown, now);
  CHECK(t.host(late, now).known);
  CHECK(slot_of(t, late) != i);
  CHECK(t.stats(now).evictions == 1);
  // Later than kStaleWriteMs: the held slot is the first to take (its torn record is no
  // live record: no eviction).
  const std::uint64_t later = now + InfraTable::kStaleWriteMs + 10;
  const InfraKey later_key = v4(10, 3, 1, 2);
  t.replied(later_key, 100, InfraTable::Edns::unknown, later);
  CHECK(t.host(later_key, later).known);
  CHECK(slot_of(t, later_key) == i);
  CHECK(t.host(later_key, later).edns == InfraTable::Edns::unknown);  // nothing of the forged record
  CHECK(t.stats(later).hosts == InfraTable::kWays);
  CHECK(t.stats(later).evictions == 1);
}

TEST_CASE("infra table: a writer killed -9 among readers of another process leaves nothing torn",
          "[workers][infra][multiprocess]") {
  InfraTable t(1, true);
  // More servers than the bucket holds (evictions too), each given a timeout and then a
  // reply without an RTT sample, as fast as it can.
  const pid_t writer = dnsarena::test::fork_endless_writer([&t](std::uint64_t n) {
    const std::uint8_t host = static_cast<std::uint8_t>(1 + n % 12);
    const InfraKey k = v4(10, 2, 0, host);
    t.timed_out(k, true, dnsarena::common::monotonic_ms());
    t.replied(k, 0, n % 2 ? InfraTable::Edns::works : InfraTable::Edns::broken, dnsarena::common::monotonic_ms());
  });
  std::size_t seen = 0, bad = 0;
  for (int round = 0; round < 20000; ++round)
    for (std::uint8_t host = 1; host <= 12; ++host) {
      const InfraTable::Host h = t.host(v4(10, 2, 0, host), dnsarena::common::monotonic_ms());
      if (!h.known) continue;
      ++seen;
      // Every record written has no RTT sample and at most one timeout (a reply follows
      // each), and an EDNS status unless it was just made by a timeout: anything else is
      // a torn copy.
      bad += h.timeouts > 1 || h.sampled || (h.edns == InfraTable::Edns::unknown && h.timeouts == 0);
    }
  dnsarena::test::kill_writer(writer);
  CHECK(seen > 0);
  CHECK(bad == 0);
  // After the kill: readable records are whole; a slot it held is taken over later.
  const std::uint64_t later = dnsarena::common::monotonic_ms() + InfraTable::kStaleWriteMs + 10;
  for (std::uint8_t host = 1; host <= 12; ++host) {
    const InfraKey k = v4(10, 2, 0, host);
    t.replied(k, 700, InfraTable::Edns::works, later);
    CHECK(t.host(k, later).srtt_us == 700);
  }
}

TEST_CASE("infra table: EDNS fallback decisions from replies and timeouts", "[workers][infra]") {
  using dnsarena::workers::query_with_edns;
  using dnsarena::workers::record_no_reply;
  using dnsarena::workers::record_reply;
  InfraTable t(16, false);
  const std::uint64_t now_us = dnsarena::common::monotonic_ms() * 1000;
  const auto a = *dnsarena::recursion::ServerAddress::parse("192.0.2.50");
  const auto key = dnsarena::workers::infra_key(a);
  CHECK(query_with_edns(t, a, now_us));
  // FORMERR (or NOTIMP) to EDNS: asked again without, nothing learned of EDNS yet.
  CHECK(record_reply(t, a, true, 1, 300, now_us) == ReplyUse::retry_without_edns);
  CHECK(record_reply(t, a, true, 4, 300, now_us) == ReplyUse::retry_without_edns);
  CHECK(query_with_edns(t, a, now_us));
  CHECK(t.host(key, now_us / 1000).sampled);  // a reply all the same: its RTT counts
  // The query without EDNS answered: broken, for every later query.
  CHECK(record_reply(t, a, false, 0, 300, now_us) == ReplyUse::take);
  CHECK_FALSE(query_with_edns(t, a, now_us));
  CHECK(t.host(key, now_us / 1000).edns == InfraTable::Edns::broken);
  // FORMERR to a query without EDNS: taken as it is (the state machine fails the server).
  CHECK(record_reply(t, a, false, 1, 300, now_us) == ReplyUse::take);
  CHECK_FALSE(query_with_edns(t, a, now_us));
  // Another server: EDNS answered works; timeouts then do not take EDNS away.
  const auto b = *dnsarena::recursion::ServerAddress::parse("192.0.2.51");
  CHECK(record_reply(t, b, true, 3, 300, now_us) == ReplyUse::take);
  CHECK(t.host(dnsarena::workers::infra_key(b), now_us / 1000).edns == InfraTable::Edns::works);
  record_no_reply(t, b, true, now_us);
  record_no_reply(t, b, true, now_us);
  CHECK(query_with_edns(t, b, now_us));
  // Unknown, and two EDNS timeouts in a row: the next query goes without; its reply
  // marks the server broken.
  const auto c = *dnsarena::recursion::ServerAddress::parse("192.0.2.52");
  record_no_reply(t, c, true, now_us);
  CHECK(query_with_edns(t, c, now_us));
  record_no_reply(t, c, true, now_us);
  CHECK_FALSE(query_with_edns(t, c, now_us));
  CHECK(record_reply(t, c, false, 0, 300, now_us) == ReplyUse::take);
  CHECK(t.host(dnsarena::workers::infra_key(c), now_us / 1000).edns == InfraTable::Edns::broken);
  CHECK_FALSE(query_with_edns(t, c, now_us));
}

TEST_CASE("infra table: the state machine's view ranks by the table and records lameness per zone",
          "[workers][infra]") {
  InfraTable t(16, false);
  dnsarena::workers::InfraRanking ranking(t);
  const auto a = *dnsarena::recursion::ServerAddress::parse("192.0.2.60");
  const auto b = *dnsarena::recursion::ServerAddress::parse("192.0.2.61");
  const auto com = dnsarena::dnssec::name_from_text("com.");
  const auto org = dnsarena::dnssec::name_from_text("org.");
  const std::uint64_t now_us = dnsarena::common::monotonic_ms() * 1000;
  dnsarena::workers::record_reply(t, a, true, 0, 2000, now_us);
  CHECK(ranking.rank(a, com) == 2000 + 4 * 1000);
  CHECK(ranking.rank(b, com) == InfraTable::kUnknownRankUs);
  ranking.lame(a, com);
  CHECK(ranking.rank(a, com) == InfraTable::kLameRank);
  CHECK(ranking.rank(a, org) == 2000 + 4 * 1000);
  CHECK(dnsarena::workers::infra_zone_hash(com) != dnsarena::workers::infra_zone_hash(org));
}

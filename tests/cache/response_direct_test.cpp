// SPDX-License-Identifier: GPL-3.0-or-later
// write_response_direct() (the one-walk writer both lookups try first) against
// write_response() (the general writer): on every entry it accepts, the very same bytes;
// where it gives up, write_response() runs instead, so only acceptance is tested here.
// Since both lookup_response() and lookup_responses() use the direct writer, the batch
// test (batch_paths_test.cpp) no longer compares it with the general one: this does.
#include <catch2/catch.hpp>
#include <cstring>

#include "cache/response_direct.hpp"
#include "sim/workload/entry_generator.hpp"
#include "test_answers.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {

constexpr std::uint32_t kInserted = 1'000'000;

struct Compared {
  bool accepted = false;
};

// Writes `entry` both ways for one query; REQUIREs equal bytes when the direct writer
// accepts.
Compared compare(const std::vector<std::uint8_t>& entry, const CacheKey& key, const QueryInfo& q, std::uint32_t now,
                 const ResponseOptions& o, std::size_t capacity) {
  std::vector<std::uint8_t> general(capacity, 0xAA), direct(capacity, 0x55);
  EntryReader reader(entry, key.blob().size());
  REQUIRE(reader.valid());
  const ResponseResult g = write_response(reader, q, now, o, general.data(), capacity);
  ResponseResult d;
  Compared c;
  c.accepted = write_response_direct(entry, key.blob().size(), q, now, o, direct.data(), capacity, &d);
  if (!c.accepted) return c;
  REQUIRE(d.size == g.size);
  REQUIRE(d.truncated == g.truncated);
  REQUIRE_FALSE(d.truncated);
  REQUIRE(std::memcmp(direct.data(), general.data(), g.size) == 0);
  return c;
}

}  // namespace

TEST_CASE("write_response_direct: write_response's bytes on every entry of the seed mix it accepts", "[response]") {
  sim::EntryGenerator gen(sim::benchmark_mix(), 7);
  sim::SplitMix64 rng(11);
  std::vector<RecordData> recs;
  std::vector<std::uint8_t> entry;
  std::uint64_t accepted = 0, tried = 0;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const sim::GeneratedEntry e = gen.generate(i);
    const CacheKey key = e.key();
    REQUIRE(encode_entry(key, e.answer(recs), kInserted, entry) > 0);
    Bytes qname = e.qname;
    if (rng.next() % 2) qname[1] = static_cast<std::uint8_t>(std::toupper(qname[1]));  // 0x20 case
    QueryInfo q;
    q.id = static_cast<std::uint16_t>(rng.next());
    q.flags = static_cast<std::uint16_t>(kFlagRd | (rng.next() % 2 ? kFlagAd : 0) | (rng.next() % 2 ? kFlagCd : 0));
    q.qname = qname;
    q.qtype = e.qtype;
    const std::uint32_t now = kInserted + static_cast<std::uint32_t>(rng.next() % 5000);  // TTLs count down
    std::size_t capacity;
    Bytes edns_option;
    const ResponseOptions o = varied_response_options(rng.next(), &capacity, &edns_option);
    INFO("entry " << i);
    accepted += compare(entry, key, q, now, o, capacity).accepted;
    ++tried;
  }
  // Most of the mix is A/AAAA/TXT at the qname: the direct writer takes them.
  REQUIRE(accepted > tried / 3);
}

TEST_CASE("write_response_direct: per-record TTLs, classes, types and owners", "[response]") {
  const Bytes qname = wire_name("www.example.com");
  const CacheKey key(qname, kA);
  QueryInfo q;
  q.id = 0x1234;
  q.flags = kFlagRd;
  q.qname = qname;
  q.qtype = kA;
  std::vector<std::uint8_t> entry;
  auto run = [&](const OwnedAnswer& a) {
    REQUIRE(encode_entry(key, a.answer(), kInserted, entry) > 0);
    return compare(entry, key, q, kInserted + 100, ResponseOptions{}, 4096).accepted;
  };
  OwnedAnswer mixed;  // other TTLs, a CH-class record, a TXT beside the A: all at the qname
  mixed.ttl = 300;
  mixed.add(kAnswer, {}, kA, 300, bytes_of({192, 0, 2, 1}))
      .add(kAnswer, {}, kA, 40, bytes_of({192, 0, 2, 2}))
      .add(kAnswer, {}, kTXT, 3600, bytes_of({3, 'a', 'b', 'c'}), 3)
      .add(kAdditional, {}, kAAAA, 300, Bytes(16, 0x20));
  REQUIRE(run(mixed));
  OwnedAnswer other_owner;  // an owner that is not the qname: compressed, so the general writer's
  other_owner.ttl = 300;
  other_owner.add(kAnswer, {}, kCNAME, 300, wire_name("a.example.net")).add(kAnswer, wire_name("a.example.net"), kA, 300,
                                                                        bytes_of({192, 0, 2, 3}));
  REQUIRE_FALSE(run(other_owner));
  OwnedAnswer expired;  // TTL run out: TTL 0 written, bytes still equal
  expired.ttl = 50;
  expired.add(kAnswer, {}, kA, 50, bytes_of({192, 0, 2, 4}));
  REQUIRE(run(expired));
}

TEST_CASE("an entry's DNSSEC verdict round-trips and leaves its answer as it is", "[response][codec]") {
  const Bytes qname = wire_name("www.example.com");
  const CacheKey key(qname, kA, kKeyDo);
  QueryInfo q;
  q.id = 0x4321;
  q.flags = kFlagRd | kFlagAd;
  q.qname = qname;
  q.qtype = kA;
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kA, 300, bytes_of({192, 0, 2, 1}));
  std::vector<std::uint8_t> plain, judged;
  REQUIRE(encode_entry(key, a.answer(), kInserted, plain) > 0);
  for (const EntryVerdict v :
       {EntryVerdict::unvalidated, EntryVerdict::secure, EntryVerdict::insecure, EntryVerdict::indeterminate}) {
    Answer with = a.answer();
    with.verdict = v;
    REQUIRE(encode_entry(key, with, kInserted, judged) > 0);
    const EntryReader reader(judged, key.blob().size());
    REQUIRE(reader.valid());
    CHECK(reader.verdict() == v);
    CHECK(reader.authentic_data() == false);  // AD is its own bit
    // The direct writer takes it, and both writers answer as for the entry without a verdict.
    CHECK(compare(judged, key, q, kInserted + 10, ResponseOptions{}, 512).accepted);
    std::vector<std::uint8_t> out_plain(512), out_judged(512);
    EntryReader plain_reader(plain), judged_reader(judged);
    const ResponseResult rp = write_response(plain_reader, q, kInserted + 10, {}, out_plain.data(), 512);
    const ResponseResult rj = write_response(judged_reader, q, kInserted + 10, {}, out_judged.data(), 512);
    REQUIRE(rp.size == rj.size);
    CHECK(std::memcmp(out_plain.data(), out_judged.data(), rp.size) == 0);
  }
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Cache keys: case folding, flags, and ECS variants of one name kept apart.
#include <catch2/catch.hpp>

#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {


EcsTag v4(int a, int b, int c, int d, std::uint8_t prefix) {
  EcsTag t;
  t.family = EcsFamily::ipv4;
  t.prefix = prefix;
  t.address[0] = static_cast<std::uint8_t>(a);
  t.address[1] = static_cast<std::uint8_t>(b);
  t.address[2] = static_cast<std::uint8_t>(c);
  t.address[3] = static_cast<std::uint8_t>(d);
  return t;
}

OwnedAnswer a_record(int last) {
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kA, 300, bytes_of({203, 0, 113, last}));
  return a;
}

}  // namespace

TEST_CASE("keys fold case and keep qtype and flags apart", "[key]") {
  const CacheKey lower_key(wire_name("www.example.com"), kA);
  const CacheKey upper_key(wire_name("WWW.Example.COM"), kA);
  REQUIRE(hex_of(lower_key.blob()) == hex_of(upper_key.blob()));
  REQUIRE(lower_key.hash() == upper_key.hash());
  REQUIRE(hex_of(upper_key.qname()) == hex_of(wire_name("www.example.com")));
  REQUIRE(hex_of(CacheKey(wire_name("www.example.com"), kAAAA).blob()) != hex_of(lower_key.blob()));
  REQUIRE(hex_of(CacheKey(wire_name("www.example.com"), kA, kKeyDo).blob()) != hex_of(lower_key.blob()));
  REQUIRE(hex_of(CacheKey(wire_name("www.example.com"), kA, kKeyCd).blob()) != hex_of(lower_key.blob()));
  REQUIRE_THROWS_AS(CacheKey(bytes_of({3, 'w', 'w'}), kA), std::invalid_argument);
  EcsTag too_long = v4(10, 0, 0, 0, 33);
  REQUIRE_THROWS_AS(CacheKey(wire_name("a.example"), kA, 0, too_long), std::invalid_argument);
}

TEST_CASE("ECS variants of one name are kept apart", "[key][ecs]") {
  const Bytes name = wire_name("geo.example.com");
  const CacheKey plain(name, kA);
  const CacheKey net1(name, kA, 0, v4(10, 0, 1, 0, 24));
  const CacheKey net2(name, kA, 0, v4(10, 0, 2, 0, 24));
  const CacheKey net1_other_host(name, kA, 0, v4(10, 0, 1, 77, 24));
  const CacheKey net1_wide(name, kA, 0, v4(10, 0, 1, 0, 16));

  SECTION("key bytes") {
    REQUIRE(hex_of(net1.blob()) != hex_of(net2.blob()));
    REQUIRE(hex_of(net1.blob()) != hex_of(plain.blob()));
    REQUIRE(hex_of(net1.blob()) != hex_of(net1_wide.blob()));
    // Host bits past the prefix are cut: same /24, different host -> same key.
    REQUIRE(hex_of(net1.blob()) == hex_of(net1_other_host.blob()));
    REQUIRE(net1.hash() == net1_other_host.hash());
    // A prefix that is not a multiple of 8 cuts inside a byte.
    REQUIRE(hex_of(CacheKey(name, kA, 0, v4(10, 0, 0x1F, 0, 20)).blob()) ==
            hex_of(CacheKey(name, kA, 0, v4(10, 0, 0x10, 0, 20)).blob()));
    REQUIRE(hex_of(CacheKey(name, kA, 0, v4(10, 0, 0x1F, 0, 20)).blob()) !=
            hex_of(CacheKey(name, kA, 0, v4(10, 0, 0x2F, 0, 20)).blob()));
  }

  SECTION("in the cache: two subnets are two entries, another host of a subnet is the same") {
    TestSegment ts(tiny_geometry(1000, 4096, 4));
    Cache c(ts.seg);
    REQUIRE(c.insert(net1, a_record(1).answer(), kNow) == InsertStatus::inserted);
    REQUIRE(c.insert(net2, a_record(2).answer(), kNow) == InsertStatus::inserted);
    REQUIRE(c.insert(plain, a_record(3).answer(), kNow) == InsertStatus::inserted);
    REQUIRE(c.stats().live_entries == 3);
    EntryCopy copy;
    REQUIRE(c.lookup(net1, kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), name, a_record(1).answer());
    REQUIRE(c.lookup(net2, kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), name, a_record(2).answer());
    REQUIRE(c.lookup(plain, kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), name, a_record(3).answer());
    REQUIRE(c.lookup(net1_other_host, kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), name, a_record(1).answer());
    REQUIRE(c.lookup(net1_wide, kNow, copy) == LookupStatus::miss);
    REQUIRE(c.insert(net1_other_host, a_record(4).answer(), kNow) == InsertStatus::replaced);
    REQUIRE(c.stats().live_entries == 3);
    REQUIRE(c.lookup(net1, kNow, copy) == LookupStatus::hit);
    require_entry_matches(copy.span(), name, a_record(4).answer());
    check_invariants(c);
  }
}

TEST_CASE("key building folds exactly 'A'..'Z' for every byte value at every name length", "[key]") {
  // Names of 2..255 wire bytes made of 63-byte labels (and a shorter last one), label
  // bytes cycling through all 256 values: the key's qname must be the byte-at-a-time
  // ascii_lower() of the input, whichever block size the key build uses.
  for (std::size_t total = 2; total <= kMaxNameWire; ++total) {
    std::vector<std::uint8_t> name;
    std::uint8_t next = static_cast<std::uint8_t>(total * 7);
    while (name.size() + 1 < total) {
      const std::size_t label = std::min<std::size_t>(63, total - 1 - name.size() - 1);
      if (label == 0) break;
      name.push_back(static_cast<std::uint8_t>(label));
      for (std::size_t i = 0; i < label; ++i) name.push_back(next++);
    }
    name.push_back(0);
    if (name.size() != total) continue;  // a length these labels cannot make exactly
    std::vector<std::uint8_t> expected(name);
    for (auto& c : expected) c = ascii_lower(c);
    CacheKey key;
    REQUIRE(key.assign(name, kA));
    INFO("name length " << total);
    REQUIRE(hex_of(key.qname()) == hex_of(expected));
    REQUIRE(key.hash() == CacheKey::hash_blob(key.blob()));
  }
}

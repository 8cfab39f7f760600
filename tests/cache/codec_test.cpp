// SPDX-License-Identifier: GPL-3.0-or-later
// Entry codec round trips: encode_entry, then EntryReader gives back every record.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "cache/entry_codec.hpp"
#include "cache/uniform_entry_writer.hpp"
#include "sim/workload/entry_generator.hpp"
#include "test_answers.hpp"
#include "test_segment.hpp"

using namespace dnsarena;
using namespace dnsarena::cache;
using namespace dnsarena::wire;
using namespace dnsarena::test;

namespace {


// Encodes, checks the entry header fields against the diagram, decodes and compares.
std::vector<std::uint8_t> round_trip(const CacheKey& key, const Answer& a) {
  std::vector<std::uint8_t> buf;
  const std::size_t len = encode_entry(key, a, kNow, buf);
  REQUIRE(len > 0);
  REQUIRE(buf.size() == padded_entry_size(len));
  REQUIRE(buf.size() % 8 == 0);
  for (std::size_t i = len; i < buf.size(); ++i) REQUIRE(buf[i] == 0);  // zero padding
  REQUIRE((std::size_t{buf[0]} | (std::size_t{buf[1]} << 8)) == len);
  EntryReader r(buf);
  REQUIRE(r.valid());
  REQUIRE(r.length() == len);
  REQUIRE(r.inserted() == kNow);
  REQUIRE(hex_of(r.key_blob()) == hex_of(key.blob()));
  REQUIRE(r.qtype() == key.qtype());
  require_entry_matches(buf, key.qname(), a);
  return buf;
}

std::uint32_t min_ttl(const Answer& a) {
  std::uint32_t m = ~0u;
  for (const auto& s : a.sections)
    for (const auto& r : s) m = std::min(m, r.ttl);
  return m;
}

}  // namespace

TEST_CASE("every entry of the seed mix round-trips (A, AAAA, TXT, 1-4 records)", "[codec]") {
  const sim::EntryGenerator gen(sim::TrafficProfile{}, 42);
  std::vector<RecordData> records;
  std::map<std::uint16_t, int> seen_types;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const sim::GeneratedEntry e = gen.generate(i);
    const Answer a = e.answer(records);
    INFO("entry " << i << " qtype " << e.qtype);
    round_trip(e.key(), a);
    ++seen_types[e.qtype];
  }
  REQUIRE(seen_types.size() == 3);
  REQUIRE(seen_types[kA] > 0);
  REQUIRE(seen_types[kAAAA] > 0);
  REQUIRE(seen_types[kTXT] > 0);
}

TEST_CASE("A and AAAA rdata lengths are implied, other lengths are stored", "[codec]") {
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kA, 300, bytes_of({192, 0, 2, 1}));
  const CacheKey key(wire_name("a.example"), kA);
  const auto one = round_trip(key, a.answer());
  // 12 header + key blob + 3 counts + desc(1) + 4 rdata bytes; nothing else.
  REQUIRE((std::size_t{one[0]} | (std::size_t{one[1]} << 8)) == kEntryHeaderBytes + key.blob().size() + 3 + 1 + 4);

  OwnedAnswer b;
  b.ttl = 300;
  b.add(kAnswer, {}, kAAAA, 300, Bytes(16, 0x20));
  const CacheKey key6(wire_name("a.example"), kAAAA);
  const auto six = round_trip(key6, b.answer());
  REQUIRE((std::size_t{six[0]} | (std::size_t{six[1]} << 8)) == kEntryHeaderBytes + key6.blob().size() + 3 + 1 + 16);

  SECTION("an A record of unusual length keeps an explicit length") {
    OwnedAnswer c;
    c.ttl = 300;
    c.add(kAnswer, {}, kA, 300, bytes_of({1, 2, 3}));
    round_trip(key, c.answer());
  }
}

TEST_CASE("CNAME chain: owners that differ from the qname are stored and restored", "[codec]") {
  OwnedAnswer a;
  a.ttl = 120;
  a.add(kAnswer, {}, kCNAME, 120, wire_name("edge.cdn.example.net"));
  a.add(kAnswer, wire_name("edge.cdn.example.net"), kCNAME, 60, wire_name("pop7.cdn.example.org"));
  a.add(kAnswer, wire_name("POP7.cdn.Example.ORG"), kA, 20, bytes_of({198, 51, 100, 7}));
  a.add(kAnswer, wire_name("pop7.cdn.example.org"), kA, 20, bytes_of({198, 51, 100, 8}));
  const CacheKey key(wire_name("WWW.Example.com"), kA);
  const auto buf = round_trip(key, a.answer());
  EntryReader r(buf);
  RecordView v;
  REQUIRE(r.next(v));
  REQUIRE(v.owner_is_qname);
  REQUIRE(v.type == kCNAME);  // type differs from the qtype: stored
  REQUIRE(r.next(v));
  REQUIRE_FALSE(v.owner_is_qname);
  REQUIRE(wire_to_text(v.owner) == "edge.cdn.example.net.");
  REQUIRE(r.next(v));
  REQUIRE(wire_to_text(v.owner) == "pop7.cdn.example.org.");  // stored lowercase
}

TEST_CASE("names inside rdata (MX, NS, SOA, SRV) are kept byte-exact", "[codec]") {
  SECTION("MX") {
    OwnedAnswer a;
    a.add(kAnswer, {}, kMX, 3600, mx_rdata(10, "mx1.example.com"));
    a.add(kAnswer, {}, kMX, 3600, mx_rdata(20, "MX2.Example.com"));  // case in rdata is kept
    round_trip(CacheKey(wire_name("example.com"), kMX), a.answer());
  }
  SECTION("NS with glue") {
    OwnedAnswer a;
    a.add(kAnswer, {}, kNS, 86400, wire_name("ns1.example.com"));
    a.add(kAnswer, {}, kNS, 86400, wire_name("ns2.example.net"));
    a.add(kAdditional, wire_name("ns1.example.com"), kA, 86400, bytes_of({192, 0, 2, 53}));
    a.add(kAdditional, wire_name("ns1.example.com"), kAAAA, 86400, Bytes(16, 0xAB));
    round_trip(CacheKey(wire_name("example.com"), kNS), a.answer());
  }
  SECTION("SOA") {
    OwnedAnswer a;
    a.add(kAnswer, {}, kSOA, 3600, soa_rdata("ns1.example.com", "hostmaster.example.com", 2024010101, 300));
    round_trip(CacheKey(wire_name("example.com"), kSOA), a.answer());
  }
  SECTION("SRV") {
    OwnedAnswer a;
    a.add(kAnswer, {}, kSRV, 600, srv_rdata(0, 5, 5060, "sip1.example.com"));
    a.add(kAnswer, {}, kSRV, 600, srv_rdata(10, 1, 5061, "sip2.example.com"));
    round_trip(CacheKey(wire_name("_sip._udp.example.com"), kSRV), a.answer());
  }
}

TEST_CASE("negative answers: NXDOMAIN and NODATA with the SOA in authority", "[codec]") {
  const Bytes soa = soa_rdata("ns1.example.com", "hostmaster.example.com", 7, 900);
  SECTION("NXDOMAIN") {
    OwnedAnswer a;
    a.rcode = 3;
    a.add(kAuthority, wire_name("example.com"), kSOA, 900, soa);
    const CacheKey key(wire_name("nope.example.com"), kA);
    const auto buf = round_trip(key, a.answer());
    EntryReader r(buf);
    REQUIRE(r.rcode() == 3);
    REQUIRE(r.count(kAnswer) == 0);
    REQUIRE(r.count(kAuthority) == 1);
    REQUIRE(r.ttl() == 900);  // the entry lives as long as its smallest record TTL
  }
  SECTION("NODATA") {
    OwnedAnswer a;
    a.add(kAuthority, wire_name("example.com"), kSOA, 900, soa);
    const auto buf = round_trip(CacheKey(wire_name("www.example.com"), kAAAA), a.answer());
    EntryReader r(buf);
    REQUIRE(r.rcode() == 0);
    REQUIRE(r.count(kAnswer) == 0);
    REQUIRE(r.count(kAuthority) == 1);
  }
}

TEST_CASE("records whose TTL, class or type differ from the entry's keep their own", "[codec]") {
  OwnedAnswer a;
  a.ttl = 300;
  a.add(kAnswer, {}, kTXT, 300, txt_rdata("same everything"));
  a.add(kAnswer, {}, kTXT, 86400, txt_rdata("longer ttl"));
  a.add(kAnswer, {}, kTXT, 300, txt_rdata("class CH"), 3);
  a.add(kAnswer, {}, kTXT, 0, txt_rdata("ttl zero"));
  a.add(kAdditional, {}, kA, 300, bytes_of({10, 0, 0, 1}));  // type differs, owner the qname
  const auto buf = round_trip(CacheKey(wire_name("t.example"), kTXT), a.answer());
  REQUIRE(EntryReader(buf).ttl() == 300);  // the explicit entry TTL wins over the smallest

  SECTION("entry TTL 0 means the smallest record TTL") {
    OwnedAnswer b;
    b.add(kAnswer, {}, kTXT, 500, txt_rdata("x"));
    b.add(kAnswer, {}, kTXT, 70, txt_rdata("y"));
    const auto e = round_trip(CacheKey(wire_name("t.example"), kTXT), b.answer());
    REQUIRE(EntryReader(e).ttl() == 70);
    REQUIRE(min_ttl(b.answer()) == 70);
  }
}

TEST_CASE("more than 255 records in a section switch to wide counts", "[codec]") {
  OwnedAnswer a;
  a.ttl = 60;
  for (int i = 0; i < 300; ++i) a.add(kAnswer, {}, kA, 60, bytes_of({10, 1, i >> 8, i & 255}));
  for (int i = 0; i < 3; ++i) a.add(kAdditional, {}, kA, 60, bytes_of({10, 2, 0, i}));
  const auto buf = round_trip(CacheKey(wire_name("many.example"), kA), a.answer());
  REQUIRE((buf[kEntryInfoOffset] & kInfoWideCounts) != 0);
  EntryReader r(buf);
  REQUIRE(r.count(kAnswer) == 300);
  REQUIRE(r.count(kAdditional) == 3);
  REQUIRE(r.record_count() == 303);

  OwnedAnswer narrow;
  for (int i = 0; i < 255; ++i) narrow.add(kAnswer, {}, kA, 60, bytes_of({10, 1, 0, i}));
  const auto nb = round_trip(CacheKey(wire_name("many.example"), kA), narrow.answer());
  REQUIRE((nb[kEntryInfoOffset] & kInfoWideCounts) == 0);
}

TEST_CASE("an entry too big for the format is rejected, not truncated", "[codec]") {
  OwnedAnswer a;
  for (int i = 0; i < 300; ++i) a.add(kAnswer, {}, kTXT, 60, Bytes(250, static_cast<std::uint8_t>(i)));
  const CacheKey key(wire_name("huge.example"), kTXT);
  std::vector<std::uint8_t> buf;
  REQUIRE(encode_entry(key, a.answer(), kNow, buf) == 0);

  SECTION("and the cache refuses it, and one larger than a region, and counts both") {
    TestSegment ts(tiny_geometry(100, 1024, 4));
    Cache c(ts.seg);
    REQUIRE(c.insert(key, a.answer(), kNow) == InsertStatus::rejected);
    OwnedAnswer big;  // encodable (about 2 KB) but larger than a 1 KiB region
    for (int i = 0; i < 8; ++i) big.add(kAnswer, {}, kTXT, 60, Bytes(250, 'x'));
    REQUIRE(encode_entry(key, big.answer(), kNow, buf) > 1024);
    REQUIRE(c.insert(key, big.answer(), kNow) == InsertStatus::rejected);
    REQUIRE(c.stats().counter(Counter::rejected_inserts) == 2);
    REQUIRE(c.stats().live_entries == 0);
    EntryCopy copy;
    REQUIRE(c.lookup(key, kNow, copy) == LookupStatus::miss);
    check_invariants(c);
  }
  SECTION("an owner that is not a valid wire name is rejected") {
    OwnedAnswer bad;
    bad.add(kAnswer, bytes_of({3, 'a', 'b'}), kA, 60, bytes_of({1, 2, 3, 4}));
    REQUIRE(encode_entry(key, bad.answer(), kNow, buf) == 0);
  }
}

TEST_CASE("the reader refuses truncated or damaged entry bytes", "[codec]") {
  OwnedAnswer a;
  a.add(kAnswer, {}, kTXT, 60, txt_rdata("hello world"));
  a.add(kAnswer, wire_name("other.example"), kTXT, 60, txt_rdata("second"));
  std::vector<std::uint8_t> buf;
  const std::size_t len = encode_entry(CacheKey(wire_name("r.example"), kTXT), a.answer(), kNow, buf);
  REQUIRE(len > 0);
  for (std::size_t cut = 0; cut < len; ++cut) {
    EntryReader r({buf.data(), cut});
    REQUIRE_FALSE((r.valid() && r.validate_all()));
  }
  // Claiming one more record than present is noticed.
  auto more = buf;
  const std::size_t counts_at = kEntryHeaderBytes + CacheKey(wire_name("r.example"), kTXT).blob().size();
  more[counts_at] = 3;
  REQUIRE_FALSE(EntryReader(more).validate_all());
}

TEST_CASE("A and AAAA records that miss the one-byte path by one field round-trip", "[codec]") {
  // encode_entry_into writes the common record (owner the qname, type the qtype, class IN,
  // the entry's TTL, implied length) as one descriptor byte and its rdata; each record
  // below differs from it in exactly one field and must take the general walk.
  for (const std::uint16_t qtype : {kA, kAAAA}) {
    const Bytes rd(qtype == kA ? 4 : 16, 0x7F);
    const CacheKey key(wire_name("fast.example"), qtype);
    OwnedAnswer a;
    a.ttl = 300;
    a.add(kAnswer, {}, qtype, 300, rd);                         // the one-byte path
    a.add(kAnswer, {}, qtype, 301, rd);                         // TTL
    a.add(kAnswer, {}, qtype, 300, rd, 3);                      // class CH
    a.add(kAnswer, wire_name("FAST.example"), qtype, 300, rd);       // owner the qname, other case
    a.add(kAnswer, wire_name("other.example"), qtype, 300, rd);      // another owner
    a.add(kAnswer, {}, qtype == kA ? kAAAA : kA, 300, rd);      // type (length not implied)
    a.add(kAnswer, {}, qtype, 300, Bytes(rd.size() + 1, 0x01));  // unusual length
    const auto buf = round_trip(key, a.answer());
    SECTION("one-byte record alone: descriptor and rdata only") {
      OwnedAnswer one;
      one.ttl = 300;
      one.add(kAnswer, {}, qtype, 300, rd);
      const auto e = round_trip(key, one.answer());
      REQUIRE((std::size_t{e[0]} | (std::size_t{e[1]} << 8)) == kEntryHeaderBytes + key.blob().size() + 3 + 1 + rd.size());
    }
  }
}

TEST_CASE("UniformEntryWriter writes encode_entry_into's bytes", "[codec][uniform]") {
  sim::SplitMix64 rng(16);
  EcsTag ecs;
  ecs.family = EcsFamily::ipv4;
  ecs.prefix = 24;
  ecs.address = {10, 1, 2, 0};
  const std::vector<CacheKey> keys = {CacheKey(wire_name("u.example"), kA), CacheKey(wire_name("u.example"), kAAAA),
                                      CacheKey(wire_name("n1z.example"), kTXT), CacheKey(wire_name("a"), kMX),
                                      CacheKey(wire_name("e.example"), kA, kKeyDo, ecs)};
  for (const CacheKey& key : keys) {
    for (std::size_t count : {0, 1, 2, 4, 255, 256, 300}) {
      for (std::uint32_t ttl : {0u, 60u, 86400u, 0xFFFFFFF0u}) {
        // Rdata sizes around the elided (4, 16) and one-byte-length (< 256) limits.
        std::vector<Bytes> rdata;
        std::size_t total = 0;
        for (std::size_t i = 0; i < count; ++i) {
          static constexpr std::size_t kSizes[] = {4, 16, 0, 1, 3, 5, 17, 64, 224, 255, 256, 700};
          const std::size_t n = kSizes[rng.next() % (count > 16 ? 4 : std::size(kSizes))];
          Bytes b(n, 0);
          for (auto& x : b) x = static_cast<std::uint8_t>(rng.next());
          total += n;
          rdata.push_back(std::move(b));
        }
        OwnedAnswer a;
        a.ttl = ttl;
        for (const Bytes& b : rdata) a.add(kAnswer, {}, key.qtype(), ttl, b);
        INFO("qtype " << key.qtype() << " count " << count << " ttl " << ttl);
        std::vector<std::uint8_t> want(3, 0xAA), got(5, 0xBB);  // reused, dirty buffers
        std::size_t want_padded = 0, got_padded = 0;
        const std::size_t want_len = encode_entry_into(key, a.answer(), kNow, want, &want_padded);
        UniformEntryWriter w(key, ttl, kNow, count, total, got);
        for (const Bytes& b : rdata) {
          std::uint8_t* at = w.add_record(b.size());
          if (!b.empty()) std::memcpy(at, b.data(), b.size());
        }
        REQUIRE(w.finish(&got_padded) == want_len);
        REQUIRE(got_padded == want_padded);
        REQUIRE(hex_of({got.data(), got_padded}) == hex_of({want.data(), want_padded}));
      }
    }
  }
}

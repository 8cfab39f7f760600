// SPDX-License-Identifier: GPL-3.0-or-later
// The key build against a reference model: every blob CacheKey builds (assign, the
// constructor, and the one-pass take_validated_name + finish_plain) must equal the blob
// written byte by byte from the layout in cache_key.hpp, and its hash libxxhash's
// XXH3_64bits of that blob (index positions in existing segments derive from it).
// Names: every label length 1-63, every name length 1-255 (255-byte names included), each
// in several cases (lower, upper, mixed, every byte value); names read from buffers of
// exactly their size (ASan builds see any read past the end) and from longer packets.
#include <catch2/catch.hpp>

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"

using namespace dnsarena::cache;
using namespace dnsarena::wire;

namespace {

using Name = std::vector<std::uint8_t>;

// The blob as the header's diagram draws it, one byte at a time.
std::vector<std::uint8_t> reference_blob(const Name& name, std::uint16_t qtype, std::uint8_t flags,
                                         const EcsTag& ecs = {}) {
  std::vector<std::uint8_t> b = {static_cast<std::uint8_t>(qtype), static_cast<std::uint8_t>(qtype >> 8),
                                 static_cast<std::uint8_t>((flags & kKeyFlagBits) | (static_cast<unsigned>(ecs.family) << 3)),
                                 ecs.prefix, static_cast<std::uint8_t>(name.size())};
  for (unsigned i = 0; i < (ecs.prefix + 7u) / 8u; ++i) {
    const unsigned kept = ecs.prefix - 8 * i >= 8 ? 8 : ecs.prefix - 8 * i;
    b.push_back(static_cast<std::uint8_t>(ecs.address[i] & (0xFF00u >> kept)));
  }
  for (std::uint8_t c : name) b.push_back(c >= 'A' && c <= 'Z' ? static_cast<std::uint8_t>(c + 32) : c);
  return b;
}

std::string hex(std::span<const std::uint8_t> b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t c : b) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

// Label content bytes for pattern `p` (position i of the whole name, for variety).
std::uint8_t content_byte(int pattern, std::size_t i, std::uint64_t& rng) {
  static const std::uint8_t edges[] = {'@', 'A', 'M', 'Z', '[', '`', 'a', 'z', '{', 0x00, 0x7F, 0x80, 0xC1, 0xDA, 0xFF, '-'};
  switch (pattern) {
    case 0: return static_cast<std::uint8_t>('a' + i % 26);
    case 1: return static_cast<std::uint8_t>('A' + i % 26);
    case 2: return static_cast<std::uint8_t>((i % 2 ? 'a' : 'A') + i % 26);
    case 3: return edges[i % sizeof edges];
    default:
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<std::uint8_t>(rng >> 56);  // every byte value
  }
}
constexpr int kPatterns = 5;

// A valid name of `len` wire bytes (1 or 3..255) whose first label has length `first`
// (0: any), the others of varied lengths; no single byte is ever left over for a label.
Name name_of_length(std::size_t len, std::size_t first, int pattern, std::uint64_t& rng) {
  Name n;
  if (len == 1) return {0};
  std::vector<std::size_t> labels;
  std::size_t left = len - 1;
  std::size_t next = first ? first : 1 + (len * 13) % 63;
  while (left > 0) {
    std::size_t l = std::min<std::size_t>({next, 63, left - 1});
    if (left - (l + 1) == 1) l = l == 63 ? l - 1 : l + 1;  // never leave one byte behind
    if (l == 0) l = 1;
    labels.push_back(l);
    left -= l + 1;
    next = 1 + (next * 7 + 3) % 63;
  }
  for (std::size_t l : labels) {
    n.push_back(static_cast<std::uint8_t>(l));
    for (std::size_t i = 0; i < l; ++i) n.push_back(content_byte(pattern, n.size(), rng));
  }
  n.push_back(0);
  return n;
}

// Builds the key of `name` every way and checks each against the reference.
void check_all_ways(const Name& name, std::uint16_t qtype, std::uint8_t flags) {
  INFO("name " << hex(name) << " qtype " << qtype << " flags " << int(flags));
  REQUIRE(wire_name_length(name) == name.size());  // the generator's own check
  const std::vector<std::uint8_t> want = reference_blob(name, qtype, flags);
  const std::uint64_t want_hash = XXH3_64bits(want.data(), want.size());

  // The name alone in a heap buffer of its exact size: a read past it is an ASan error.
  const auto exact = std::make_unique<std::uint8_t[]>(name.size());
  std::copy(name.begin(), name.end(), exact.get());
  const std::span<const std::uint8_t> span(exact.get(), name.size());

  CacheKey assigned;
  REQUIRE(assigned.assign(span, qtype, flags));
  CHECK(hex(assigned.blob()) == hex(want));
  CHECK(assigned.hash() == want_hash);
  const CacheKey constructed(span, qtype, flags);
  CHECK(hex(constructed.blob()) == hex(want));
  CHECK(constructed.hash() == want_hash);

  // One pass, from exactly the name's bytes and from a packet with bytes after it.
  for (const std::size_t slack : {std::size_t{0}, std::size_t{4}, std::size_t{15}, std::size_t{40}}) {
    INFO("readable slack " << slack);
    const auto packet = std::make_unique<std::uint8_t[]>(name.size() + slack);
    std::copy(name.begin(), name.end(), packet.get());
    for (std::size_t i = 0; i < slack; ++i) packet[name.size() + i] = static_cast<std::uint8_t>('Q' + i);
    std::uint8_t raw[255];
    std::fill(std::begin(raw), std::end(raw), 0xEE);
    CacheKey one_pass;
    REQUIRE(one_pass.assign(span, 1, 0));  // a previous key in the same object
    one_pass.take_validated_name(packet.get(), name.size(), name.size() + slack, raw);
    REQUIRE(one_pass.finish_plain(qtype, flags));
    CHECK(hex(one_pass.blob()) == hex(want));
    CHECK(one_pass.hash() == want_hash);
    CHECK(hex({raw, name.size()}) == hex(name));  // the parser's copy, unchanged case
    CHECK_FALSE(one_pass.finish_plain(qtype, flags));  // the name is used up
    CHECK(hex(one_pass.blob()) == hex(want));
  }
}

}  // namespace

TEST_CASE("key build: every label length 1-63 in every case, both paths", "[key]") {
  std::uint64_t rng = 1;
  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    for (std::size_t l = 1; l <= 63; ++l) {
      Name one_label = {static_cast<std::uint8_t>(l)};
      for (std::size_t i = 0; i < l; ++i) one_label.push_back(content_byte(pattern, i + 1, rng));
      one_label.push_back(0);
      check_all_ways(one_label, 1, 0);
      check_all_ways(name_of_length(std::min<std::size_t>(255, l + 1 + 20), l, pattern, rng), 28, kKeyDo);
    }
  }
}

TEST_CASE("key build: every name length 1-255 in every case, both paths", "[key]") {
  std::uint64_t rng = 7;
  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    for (std::size_t len = 1; len <= 255; ++len) {
      if (len == 2) continue;  // no valid name has two bytes
      const Name n = name_of_length(len, 0, pattern, rng);
      REQUIRE(n.size() == len);
      check_all_ways(n, static_cast<std::uint16_t>(len * 257), static_cast<std::uint8_t>(len % 8));
    }
  }
  // 255-byte names of 63-byte labels and of one-byte labels.
  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    check_all_ways(name_of_length(255, 63, pattern, rng), 16, kKeyCd);
    Name ones;
    for (int i = 0; i < 127; ++i) {
      ones.push_back(1);
      ones.push_back(content_byte(pattern, ones.size(), rng));
    }
    ones.push_back(0);
    check_all_ways(ones, 65535, kKeyDo | kKeyCd | kKeyAuthenticated);
  }
}

TEST_CASE("key build: the DNS64 flag makes a key of its own, kept by the blob", "[key]") {
  const Name name = {3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
  check_all_ways(name, 28, kKeyDns64);
  check_all_ways(name, 28, kKeyDo | kKeyDns64);
  const CacheKey plain(name, 28, kKeyDo), dns64(name, 28, kKeyDo | kKeyDns64);
  CHECK_FALSE(std::equal(plain.blob().begin(), plain.blob().end(), dns64.blob().begin(), dns64.blob().end()));
  CHECK(dns64.blob()[2] == (kKeyDo | kKeyDns64));
  CHECK(dns64.flags() == (kKeyDo | kKeyDns64));
  CacheKey back;
  REQUIRE(CacheKey::from_blob(dns64.blob(), back));
  CHECK(back.flags() == (kKeyDo | kKeyDns64));
  CHECK(back.hash() == dns64.hash());
  // Bits 6-7 stay reserved: a blob with one set is not a key.
  std::vector<std::uint8_t> bad(dns64.blob().begin(), dns64.blob().end());
  bad[2] |= 0x40;
  CHECK_FALSE(CacheKey::from_blob(bad, back));
}

TEST_CASE("key build: ECS-tagged keys match the reference", "[key]") {
  std::uint64_t rng = 3;
  for (std::size_t len : {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 200, 255}) {
    const Name n = name_of_length(len, 0, 4, rng);
    for (unsigned prefix = 0; prefix <= 128; prefix += 5) {
      EcsTag tag;
      tag.family = prefix <= 32 && len % 2 ? EcsFamily::ipv4 : EcsFamily::ipv6;
      tag.prefix = static_cast<std::uint8_t>(prefix);
      for (auto& b : tag.address) b = content_byte(4, 0, rng);
      if (tag.family == EcsFamily::ipv4 && prefix > 32) continue;
      const std::vector<std::uint8_t> want = reference_blob(n, 1, kKeyDo, tag);
      const CacheKey k(n, 1, kKeyDo, tag);
      INFO("len " << len << " prefix " << prefix);
      CHECK(hex(k.blob()) == hex(want));
      CHECK(k.hash() == XXH3_64bits(want.data(), want.size()));
    }
  }
}

TEST_CASE("key build: invalid names are refused, a taken name is used once", "[key]") {
  const std::vector<Name> bad = {
      {},                      // empty
      {1, 'a'},                // runs past the end
      {0xC0, 0x0C},            // a compression pointer
      {64, 'a', 0},            // label over 63 (and short)
      {1, 'a', 0, 0},          // bytes after the root
      {3, 'a', 'b', 0},        // label longer than what is left
      {0x40, 0},               // reserved label type
  };
  for (const Name& n : bad) {
    INFO("name " << hex(n));
    CacheKey k;
    CHECK_FALSE(k.assign(n, 1));
    CHECK(k.blob().empty());
    CHECK_THROWS_AS(CacheKey(n, 1), std::invalid_argument);
  }
  Name too_long;  // 257 bytes: four 63-byte labels and one of 1
  for (int i = 0; i < 4; ++i) {
    too_long.push_back(63);
    too_long.insert(too_long.end(), 63, 'x');
  }
  too_long.push_back(1);
  too_long.push_back('y');
  too_long.push_back(0);
  CHECK_FALSE(CacheKey().assign(too_long, 1));

  // finish_plain with no name taken, after drop_name, after assign: false, key unchanged.
  const Name www = {3, 'W', 'w', 'W', 0};
  std::uint8_t raw[255];
  CacheKey k;
  CHECK_FALSE(k.finish_plain(1, 0));
  k.take_validated_name(www.data(), www.size(), www.size(), raw);
  k.drop_name();
  CHECK_FALSE(k.finish_plain(1, 0));
  k.take_validated_name(www.data(), www.size(), www.size(), raw);
  REQUIRE(k.assign(www, 28));
  CHECK_FALSE(k.finish_plain(1, 0));
  CHECK(k.qtype() == 28);
}

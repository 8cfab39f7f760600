// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/siphash.hpp"

#include <bit>
#include <cstring>

namespace dnsarena::dns {

namespace {

inline std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

// `n` (<= 8) bytes at p as a little-endian word: one load on a little-endian machine.
inline std::uint64_t load_le(const std::uint8_t* p, std::size_t n = 8) {
  std::uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, n);
  } else {
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  }
  return v;
}

struct SipState {
  std::uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  void compress(std::uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

std::uint64_t siphash24(const SipHashKey& key, const std::uint8_t* msg, std::size_t len) {
  const std::uint64_t k0 = load_le(key.data()), k1 = load_le(key.data() + 8);
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  const std::size_t whole = len - len % 8;
  for (std::size_t i = 0; i < whole; i += 8) s.compress(load_le(msg + i));
  // The last word: the remaining bytes, little-endian, with the length's low byte on top.
  // (No load for an empty tail: `msg` may be null when len is 0.)
  const std::uint64_t tail = len == whole ? 0 : load_le(msg + whole, len - whole);
  const std::uint64_t last = (static_cast<std::uint64_t>(len & 0xFF) << 56) | tail;
  s.compress(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace dnsarena::dns

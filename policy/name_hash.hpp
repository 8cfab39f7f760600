// SPDX-License-Identifier: GPL-3.0-or-later
// Hashes of a lowercase wire name and of all its suffixes in one pass. POLICY-FORMAT:
// the compiler and the lookup must agree bit for bit (images are not portable across a
// change here: bump kImageFormatVersion).
//
// The state starts at the root and absorbs labels right to left, eight bytes at a time
// (the label's length byte included, so "a.bc" and "ab.c" differ), so state[i] depends on
// the suffix that starts at label i alone: the trigger `example.com` hashes the same
// whether it is compiled alone or met as the suffix of `www.example.com`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/mix_hash.hpp"

namespace dnsarena::policy {

inline constexpr std::uint64_t kHashSeed = 0x9E3779B97F4A7C15ull;
inline constexpr std::uint64_t kSaltExact = 0x243F6A8885A308D3ull;
inline constexpr std::uint64_t kSaltWildcard = 0x13198A2E03707344ull;
inline constexpr std::size_t kMaxLabels = 127;
inline constexpr std::uint64_t kSaltResponseIp = 0xA4093822299F31D0ull;
inline constexpr std::uint64_t kSaltClientIp = 0x082EFA98EC4E6C89ull;

// Absorbs `n` bytes at `p` into `h`. REQUIRES: 8 bytes readable from every p + 8k < p + n
// (the callers' name buffers carry 8 bytes of slack).
inline std::uint64_t absorb(std::uint64_t h, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    const std::size_t left = n - i;
    if (left < 8) w &= ~std::uint64_t{0} >> (64 - 8 * left);
    h = (h ^ w) * 0x100000001B3ull;
    h ^= h >> 31;
  }
  return h;
}

// The key of a trigger: the suffix state, salted by its kind.
inline std::uint64_t trigger_hash(std::uint64_t state, bool wildcard) {
  return common::fmix64(state ^ (wildcard ? kSaltWildcard : kSaltExact));
}

// The key of an address trigger (policy_image.hpp: prefix length, then 16 address bytes
// with the bits past the prefix zero), salted by its kind (client_ip or not).
inline std::uint64_t address_trigger_hash(const std::uint8_t* key, bool client) {
  std::uint8_t buf[24] = {};
  std::memcpy(buf, key, 17);
  return common::fmix64(absorb(kHashSeed, buf, 17) ^ (client ? kSaltClientIp : kSaltResponseIp));
}

// The filter in front of the slot table (policy_image.hpp): a trigger sets two bits of one
// 64-bit word; the word comes from the hash's top bits, the bits from the middle ones (the
// slot index takes the low bits, so the three are independent).
inline std::uint64_t filter_bits(std::uint64_t hash) {
  return (std::uint64_t{1} << ((hash >> 26) & 63)) | (std::uint64_t{1} << ((hash >> 32) & 63));
}
inline std::size_t filter_word(std::uint64_t hash, std::uint32_t words) { return (hash >> 38) & (words - 1); }

// A name split into labels, with the suffix state of each: state[i] covers labels i..
// labels-1, state[labels] is the root's (the seed).
struct NameSuffixes {
  unsigned labels = 0;
  std::uint8_t offset[kMaxLabels + 1];
  std::uint64_t state[kMaxLabels + 1];
};

// REQUIRES: `name` a valid wire name of `len` bytes (root included), 8 bytes readable past it.
inline void split_suffixes(const std::uint8_t* name, std::size_t len, NameSuffixes& s) {
  unsigned n = 0;
  for (std::size_t pos = 0; pos < len && name[pos] != 0; pos += name[pos] + 1u) s.offset[n++] = static_cast<std::uint8_t>(pos);
  s.labels = n;
  std::uint64_t h = kHashSeed;
  s.state[n] = h;
  for (unsigned i = n; i-- > 0;) {
    h = absorb(h, name + s.offset[i], name[s.offset[i]] + 1u);
    s.state[i] = h;
  }
}

}  // namespace dnsarena::policy

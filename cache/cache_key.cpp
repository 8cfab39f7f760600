// SPDX-License-Identifier: GPL-3.0-or-later
#include "cache_key.hpp"

// XXH3 inlined into hash_blob (the same function as libxxhash's, so the same values and
// index positions): a key is hashed once per lookup and per reclaimed entry, and the
// call through the shared library cost a fifth of the hash. XXH64 (segment.cpp) stays
// linked.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <stdexcept>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../wire/address_prefix.hpp"

namespace dnsarena::cache {

namespace {
std::size_t ecs_bytes(std::uint8_t prefix) { return (prefix + 7u) / 8u; }

// The fixed fields (offsets 0-4): qtype, key_flags and ecs_prefix as one little-endian
// 32-bit store, qname_len a byte: five byte stores compile to twice the instructions.
inline void store_fixed(std::uint8_t* blob, std::uint16_t qtype, std::uint8_t key_flags, std::uint8_t prefix,
                        std::size_t name_len) {
  const std::uint32_t word = std::uint32_t{qtype} | std::uint32_t{key_flags} << 16 | std::uint32_t{prefix} << 24;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(blob, &word, 4);
  } else {
    for (int i = 0; i < 4; ++i) blob[i] = static_cast<std::uint8_t>(word >> (8 * i));
  }
  blob[4] = static_cast<std::uint8_t>(name_len);
}

// XXH3_64bits of a blob (6..276 bytes) with its length dispatch inline: the blobs of the
// seed's names (20-45 bytes) go straight to the 17-128 byte case. The same function as
// XXH3_64bits (its own dispatch, xxhash.h XXH3_64bits_internal, with the default secret
// and seed 0), so the same values; cache_key_test.cpp checks against libxxhash.
// Inline, because the out-of-line XXH3_64bits call and its dispatch are a fifth of its cost.
[[gnu::always_inline]] inline std::uint64_t xxh3_blob(const std::uint8_t* blob, std::size_t n) {
  if (n > 16 && n <= 128) return XXH3_len_17to128_64b(blob, n, XXH3_kSecret, sizeof XXH3_kSecret, 0);
  if (n <= 16) return XXH3_len_0to16_64b(blob, n, XXH3_kSecret, 0);
  return XXH3_64bits(blob, n);
}

// Copies a wire name of n bytes lowercased to `lower` (and unchanged to `raw` when kRaw):
// a byte in 'A'..'Z' gets 0x20 ORed in (lowercase_copy, dns_name.hpp), sixteen bytes a
// load with SSE2 (every x86-64). n >= 16: blocks from the start, the last one ending at
// n (overlapping the one before; lowercasing is idempotent). n < 16: one block when 16
// bytes may be read (`readable`; the store's bytes past n are spare room), else two
// overlapping eight-byte (8-15) or four-byte (4-7) words, bytes below that (1 or 3: the
// only valid names that short). Never reads past `readable` >= n.
// REQUIRES: `lower` (and `raw`) have room for max(n, 16) bytes.
// The seed's names are 15-40 bytes: most take the one-block or two-word paths.
template <bool kRaw>
inline void copy_name_lower(std::uint8_t* lower, std::uint8_t* raw, const std::uint8_t* src, std::size_t n,
                            std::size_t readable) {
#ifdef __SSE2__
  const __m128i shift = _mm_set1_epi8(static_cast<char>(0x80 - 'A'));  // 'A'..'Z' -> -128..-103
  const __m128i below = _mm_set1_epi8(static_cast<char>(-128 + 26));
  const __m128i bit = _mm_set1_epi8(0x20);
  auto lower16 = [&](__m128i v) { return _mm_or_si128(v, _mm_and_si128(_mm_cmplt_epi8(_mm_add_epi8(v, shift), below), bit)); };
  auto block = [&](std::size_t at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at));
    if constexpr (kRaw) _mm_storeu_si128(reinterpret_cast<__m128i*>(raw + at), v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lower + at), lower16(v));
  };
  if (n >= 16 || readable >= 16) {
    block(0);
    if (n > 16) {
      for (std::size_t at = 16; at + 16 < n; at += 16) block(at);
      block(n - 16);
    }
    return;
  }
  if (n >= 8) {
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
    const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + n - 8));
    if constexpr (kRaw) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(raw + n - 8), hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(raw), lo);
    }
    const __m128i l = lower16(_mm_unpacklo_epi64(lo, hi));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(lower + n - 8), _mm_unpackhi_epi64(l, l));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(lower), l);
    return;
  }
#endif
  if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, src, 4);
    std::memcpy(&hi, src + n - 4, 4);
    if constexpr (kRaw) {
      std::memcpy(raw + n - 4, &hi, 4);
      std::memcpy(raw, &lo, 4);
    }
    const std::uint64_t l = wire::lower8(std::uint64_t{lo} | std::uint64_t{hi} << 32);
    const std::uint32_t l_lo = static_cast<std::uint32_t>(l), l_hi = static_cast<std::uint32_t>(l >> 32);
    std::memcpy(lower + n - 4, &l_hi, 4);
    std::memcpy(lower, &l_lo, 4);
    if (n <= 8) return;
    // n > 8 only without SSE2: the bytes between the two words.
    wire::lowercase_copy(lower, {src, n});
    if constexpr (kRaw) std::memcpy(raw, src, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kRaw) raw[i] = src[i];
    lower[i] = wire::ascii_lower(src[i]);
  }
}
}  // namespace

CacheKey::CacheKey(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags,
                   const EcsTag& ecs) {
  if (assign(qname_wire, qtype, flags, ecs)) return;
  const std::size_t name_len = wire::wire_name_length(qname_wire);
  if (name_len == 0 || name_len != qname_wire.size())
    throw std::invalid_argument("cache key: qname is not a valid uncompressed wire name");
  if (ecs.family != EcsFamily::none && ecs.family != EcsFamily::ipv4 && ecs.family != EcsFamily::ipv6)
    throw std::invalid_argument("cache key: unknown ECS family");
  throw std::invalid_argument("cache key: ECS prefix longer than the address");
}

bool CacheKey::assign(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags,
                      const EcsTag& ecs) {
  size_ = 0;
  pending_size_ = 0;
  const std::size_t name_len = qname_wire.size();
  if (name_len == 0 || name_len > wire::kMaxNameWire) return false;
  // A known family (none, IPv4, IPv6) and a prefix no longer than its address (any prefix
  // but 0 without a family): one table look-up instead of a compare chain and a call.
  static constexpr std::uint8_t kMaxPrefix[3] = {0, 32, 128};
  const auto family = static_cast<unsigned>(ecs.family);
  if (family > 2 || ecs.prefix > kMaxPrefix[family]) return false;
  const std::uint8_t prefix = ecs.prefix;
  // The labels: each length 1..63 and the root label exactly at the end (no pointer, no
  // bytes after it); a name of at most 255 bytes. Hops over the labels, not the bytes;
  // one unsigned compare stops at both the root (0 - 1 wraps) and a length over 63.
  const std::uint8_t* src = qname_wire.data();
  std::size_t at = 0;
  unsigned label;
  while ((label = src[at]) - 1u < 63u) {
    at += 1u + label;
    if (at >= name_len) return false;
  }
  if (label != 0 || at + 1 != name_len) return false;
  store_fixed(bytes_.data(), qtype, static_cast<std::uint8_t>((flags & kKeyFlagBits) | (family << 3)), prefix, name_len);
  std::size_t pos = kKeyFixedBytes;
  if (prefix != 0) {
    const std::size_t abytes = ecs_bytes(prefix);
    std::memcpy(&bytes_[pos], ecs.address.data(), abytes);
    wire::clear_bits_past_prefix({&bytes_[pos], abytes}, prefix);
    pos += abytes;
  }
  copy_name_lower<false>(&bytes_[pos], nullptr, src, name_len, name_len);
  size_ = static_cast<std::uint16_t>(pos + name_len);
  hash_ = xxh3_blob(bytes_.data(), size_);  // hash_blob(), without the call
  return true;
}

void CacheKey::take_validated_name(const std::uint8_t* name, std::size_t n, std::size_t readable, std::uint8_t* raw) {
  copy_name_lower<true>(&bytes_[kKeyFixedBytes], raw, name, n, readable);
  pending_size_ = static_cast<std::uint16_t>(kKeyFixedBytes + n);
}

bool CacheKey::finish_plain(std::uint16_t qtype, std::uint8_t flags) {
  const std::size_t size = pending_size_;
  if (size == 0) return false;
  pending_size_ = 0;
  store_fixed(bytes_.data(), qtype, flags & kKeyFlagBits, 0, size - kKeyFixedBytes);  // no ECS family, no prefix
  size_ = static_cast<std::uint16_t>(size);
  hash_ = xxh3_blob(bytes_.data(), size);
  return true;
}

std::size_t CacheKey::blob_length(std::span<const std::uint8_t> b) {
  if (b.size() < kKeyFixedBytes) return 0;
  const unsigned family = (b[2] >> 3) & 0x3;
  if (family > 2 || (b[2] & 0xC0) != 0) return 0;
  const unsigned max_prefix = family == 1 ? 32 : family == 2 ? 128 : 0;
  if (b[3] > max_prefix) return 0;
  const std::size_t total = kKeyFixedBytes + ecs_bytes(b[3]) + b[4];
  if (b[4] == 0 || total > b.size()) return 0;
  const auto name = b.subspan(kKeyFixedBytes + ecs_bytes(b[3]), b[4]);
  if (wire::wire_name_length(name) != b[4]) return 0;
  return total;
}

bool CacheKey::from_blob(std::span<const std::uint8_t> blob, CacheKey& out) {
  const std::size_t len = blob_length(blob);
  if (len == 0) return false;
  std::memcpy(out.bytes_.data(), blob.data(), len);
  out.size_ = static_cast<std::uint16_t>(len);
  out.hash_ = hash_blob(out.blob());
  return true;
}

std::uint64_t CacheKey::hash_blob(std::span<const std::uint8_t> blob) { return XXH3_64bits(blob.data(), blob.size()); }

std::span<const std::uint8_t> CacheKey::qname() const {
  return {bytes_.data() + kKeyFixedBytes + ecs_bytes(bytes_[3]), bytes_[4]};
}

}  // namespace dnsarena::cache

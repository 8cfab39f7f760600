#include "cache_key.hpp"

// XXH3 inlined into hash_blob (the same function as libxxhash's, so the same values and
// index positions): a key is hashed once per lookup and per reclaimed entry, and the
// call through the shared library cost a fifth of the hash. XXH64 (segment.cpp) stays
// linked.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <stdexcept>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "address_prefix.hpp"

namespace dnsarena::cache {

namespace {
std::size_t ecs_bytes(std::uint8_t prefix) { return (prefix + 7u) / 8u; }

// lowercase_copy() (dns_name.hpp), sixteen bytes at a time where SSE2 is there (every
// x86-64): a byte in 'A'..'Z' gets 0x20 ORed in, the last block overlapping the one
// before. Names of 16-255 bytes; shorter ones take lowercase_copy's eight-byte words.
// NOTE: the key build cost ~60 instructions a hit in lower8 words (callgrind, seed mix).
inline void lowercase_name(std::uint8_t* dst, std::span<const std::uint8_t> src) {
#ifdef __SSE2__
  const std::size_t n = src.size();
  if (n >= 16) {
    const __m128i shift = _mm_set1_epi8(static_cast<char>(0x80 - 'A'));  // 'A'..'Z' -> -128..-103
    const __m128i below = _mm_set1_epi8(static_cast<char>(-128 + 26));
    const __m128i bit = _mm_set1_epi8(0x20);
    auto lower16 = [&](std::size_t at) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src.data() + at));
      const __m128i upper = _mm_cmplt_epi8(_mm_add_epi8(v, shift), below);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + at), _mm_or_si128(v, _mm_and_si128(upper, bit)));
    };
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) lower16(i);
    if (i < n) lower16(n - 16);
    return;
  }
#endif
  lowercase_copy(dst, src);
}
}  // namespace

CacheKey::CacheKey(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags,
                   const EcsTag& ecs) {
  if (assign(qname_wire, qtype, flags, ecs)) return;
  const std::size_t name_len = wire_name_length(qname_wire);
  if (name_len == 0 || name_len != qname_wire.size())
    throw std::invalid_argument("cache key: qname is not a valid uncompressed wire name");
  if (ecs.family != EcsFamily::none && ecs.family != EcsFamily::ipv4 && ecs.family != EcsFamily::ipv6)
    throw std::invalid_argument("cache key: unknown ECS family");
  throw std::invalid_argument("cache key: ECS prefix longer than the address");
}

bool CacheKey::assign(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags,
                      const EcsTag& ecs) {
  size_ = 0;
  const std::size_t name_len = qname_wire.size();
  if (name_len == 0 || name_len > kMaxNameWire) return false;
  // A known family (none, IPv4, IPv6) and a prefix no longer than its address (any prefix
  // but 0 without a family): one table look-up instead of a compare chain and a call.
  static constexpr std::uint8_t kMaxPrefix[3] = {0, 32, 128};
  const auto family = static_cast<unsigned>(ecs.family);
  if (family > 2 || ecs.prefix > kMaxPrefix[family]) return false;
  const std::uint8_t prefix = ecs.prefix;
  // The labels: each length 1..63 and the root label exactly at the end (no pointer, no
  // bytes after it); a name of at most 255 bytes. Hops over the labels, not the bytes.
  const std::uint8_t* src = qname_wire.data();
  std::size_t at = 0;
  while (src[at] != 0) {
    if (src[at] > 63) return false;
    at += 1u + src[at];
    if (at >= name_len) return false;
  }
  if (at + 1 != name_len) return false;
  bytes_[0] = static_cast<std::uint8_t>(qtype);
  bytes_[1] = static_cast<std::uint8_t>(qtype >> 8);
  bytes_[2] = static_cast<std::uint8_t>((flags & 0x07) | (static_cast<std::uint8_t>(ecs.family) << 3));
  bytes_[3] = prefix;
  bytes_[4] = static_cast<std::uint8_t>(name_len);
  std::size_t pos = kKeyFixedBytes;
  if (prefix != 0) {
    const std::size_t abytes = ecs_bytes(prefix);
    std::memcpy(&bytes_[pos], ecs.address.data(), abytes);
    clear_bits_past_prefix({&bytes_[pos], abytes}, prefix);
    pos += abytes;
  }
  lowercase_name(&bytes_[pos], qname_wire);
  size_ = static_cast<std::uint16_t>(pos + name_len);
  hash_ = XXH3_64bits(bytes_.data(), size_);  // hash_blob(), without the call
  return true;
}

std::size_t CacheKey::blob_length(std::span<const std::uint8_t> b) {
  if (b.size() < kKeyFixedBytes) return 0;
  const unsigned family = (b[2] >> 3) & 0x3;
  if (family > 2 || (b[2] & 0xE0) != 0) return 0;
  const unsigned max_prefix = family == 1 ? 32 : family == 2 ? 128 : 0;
  if (b[3] > max_prefix) return 0;
  const std::size_t total = kKeyFixedBytes + ecs_bytes(b[3]) + b[4];
  if (b[4] == 0 || total > b.size()) return 0;
  const auto name = b.subspan(kKeyFixedBytes + ecs_bytes(b[3]), b[4]);
  if (wire_name_length(name) != b[4]) return 0;
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

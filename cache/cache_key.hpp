// SPDX-License-Identifier: GPL-3.0-or-later
// The cache key and its byte form ("key blob"). FORMAT-DEPENDENT: the blob is stored
// verbatim in every entry, so a lookup compares one memcmp-able run of bytes.
//
// Key blob:
//
//   offset size   field        meaning
//   0      2      qtype        little-endian
//   2      1      key_flags    |7 6|5|4 3|2|1|0|  bit0 DO, bit1 CD, bit2 authenticated: kept
//                              | 0 | |fam| | | |  by a validating worker, the entry's verdict
//                                                 bits set (workers/query_check.hpp),
//                                                 bits 3-4 ECS family (0 none, 1 IPv4, 2 IPv6),
//                                                 bit5 DNS64: an answer synthesized for DNS64
//                                                 clients (workers/dns64.hpp), never found by
//                                                 a query without the flag; bits 6-7 zero
//   3      1      ecs_prefix   ECS prefix length in bits (the scope the answer is valid for)
//   4      1      qname_len    length of the wire qname (2..255; 1 for the root)
//   5      a      ecs_address  ceil(ecs_prefix / 8) bytes, bits past the prefix zeroed
//   5+a    n      qname        wire form, lowercase
//
// Two keys are equal exactly when their blobs are byte-equal: qnames are lowercased and
// ECS addresses cut to the prefix when the key is built.
#pragma once
#include <array>
#include <cstdint>
#include <span>

#include "../wire/dns_name.hpp"

namespace dnsarena::cache {

inline constexpr std::uint8_t kKeyDo = 1u << 0;
inline constexpr std::uint8_t kKeyCd = 1u << 1;
inline constexpr std::uint8_t kKeyAuthenticated = 1u << 2;
inline constexpr std::uint8_t kKeyDns64 = 1u << 5;
// The key_flags bits a caller gives (the ECS family is the key's own).
inline constexpr std::uint8_t kKeyFlagBits = kKeyDo | kKeyCd | kKeyAuthenticated | kKeyDns64;
inline constexpr std::size_t kKeyFixedBytes = 5;
inline constexpr std::size_t kMaxKeyBytes = kKeyFixedBytes + 16 + wire::kMaxNameWire;

enum class EcsFamily : std::uint8_t { none = 0, ipv4 = 1, ipv6 = 2 };

struct EcsTag {
  EcsFamily family = EcsFamily::none;
  std::uint8_t prefix = 0;              // scope prefix length in bits
  std::array<std::uint8_t, 16> address{};  // network byte order
};

class CacheKey {
public:
  // Builds a key. `qname_wire` may be in any case; it must be a valid uncompressed wire
  // name. `flags` is a combination of kKeyDo, kKeyCd, kKeyAuthenticated, kKeyDns64.
  // Throws std::invalid_argument for an invalid name or ECS prefix.
  CacheKey(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags = 0,
           const EcsTag& ecs = {});
  // The same key built in place (no temporary to copy; a worker's batch reuses its keys):
  // false, leaving the key empty, where the constructor throws. One hop per label checks
  // the label lengths, then the name is copied lowercased sixteen bytes at a time (SSE2;
  // two overlapping eight- or four-byte words below 16) and the blob hashed once (XXH3).
  bool assign(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags = 0,
              const EcsTag& ecs = {});
  // The one-pass build from the wire, for a parser that has validated the name itself
  // (dns/fast_query_parser.hpp, the worker's batch path). Two steps, because the key's
  // flags are known only once the rest of the packet is read:
  //
  //   key.take_validated_name(name, n, readable, raw);  // while parsing: one read of the name
  //   ...                                                 // the OPT record: DO
  //   key.finish_plain(qtype, flags);                     // the key without an ECS tag
  //
  // take_validated_name copies the name unchanged to `raw` (the parser's own copy) and
  // lowercased into the key in the same loads, sixteen bytes at a time; it checks nothing.
  // finish_plain writes the fixed fields and hashes the blob: the same blob and hash as
  // assign(name, qtype, flags) (tests/cache/cache_key_test.cpp compares them). It returns
  // false, changing nothing, when no name was taken since the last finish_plain, assign
  // or drop_name (the caller then builds the key with assign).
  // REQUIRES: `name` is a valid uncompressed wire name of n bytes (labels 1..63, the root
  // label last, n <= 255); `readable` >= n bytes may be read at `name` (the packet's bytes
  // from there: more lets short names take one 16-byte load); `raw` has room for
  // max(n, 16) bytes (bytes past n may be overwritten).
  void take_validated_name(const std::uint8_t* name, std::size_t n, std::size_t readable, std::uint8_t* raw);
  bool finish_plain(std::uint16_t qtype, std::uint8_t flags);
  void drop_name() { pending_size_ = 0; }

  // Rebuilds a key from a blob stored in an entry. Returns false when it is malformed.
  static bool from_blob(std::span<const std::uint8_t> blob, CacheKey& out);

  std::span<const std::uint8_t> blob() const { return {bytes_.data(), size_}; }
  std::uint64_t hash() const { return hash_; }
  std::uint16_t qtype() const { return static_cast<std::uint16_t>(bytes_[0] | (bytes_[1] << 8)); }
  std::uint8_t flags() const { return bytes_[2] & kKeyFlagBits; }
  std::span<const std::uint8_t> qname() const;

  // Length of the key blob at the start of `bytes`, or 0 if malformed.
  static std::size_t blob_length(std::span<const std::uint8_t> bytes);
  static std::uint64_t hash_blob(std::span<const std::uint8_t> blob);
  // Length of a blob from its fixed fields alone (no name validation), for blobs this
  // process wrote itself; 0 if it would exceed `available`.
  static std::size_t blob_length_unchecked(const std::uint8_t* blob, std::size_t available) {
    if (available < kKeyFixedBytes) return 0;
    const std::size_t n = kKeyFixedBytes + (blob[3] + 7u) / 8u + blob[4];
    return n <= available ? n : 0;
  }

  // An empty key (blob of length 0) that from_blob() can fill.
  CacheKey() = default;

private:
  std::array<std::uint8_t, kMaxKeyBytes> bytes_;  // only [0, size_) is meaningful
  std::uint16_t size_ = 0;
  std::uint16_t pending_size_ = 0;  // take_validated_name's blob size for finish_plain; 0: none
  std::uint64_t hash_ = 0;
};

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/cache_key.cpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
#include "cache_key.hpp"

#include <xxhash.h>

#include <cstring>
#include <stdexcept>

namespace dnsarena::frozen3 {

namespace {
std::size_t ecs_bytes(std::uint8_t prefix) { return (prefix + 7u) / 8u; }
}  // namespace

CacheKey::CacheKey(std::span<const std::uint8_t> qname_wire, std::uint16_t qtype, std::uint8_t flags,
                   const EcsTag& ecs) {
  const std::size_t name_len = wire_name_length(qname_wire);
  if (name_len == 0 || name_len != qname_wire.size())
    throw std::invalid_argument("cache key: qname is not a valid uncompressed wire name");
  const std::uint8_t max_prefix = ecs.family == EcsFamily::ipv4 ? 32 : ecs.family == EcsFamily::ipv6 ? 128 : 0;
  if (ecs.family != EcsFamily::none && ecs.family != EcsFamily::ipv4 && ecs.family != EcsFamily::ipv6)
    throw std::invalid_argument("cache key: unknown ECS family");
  if (ecs.prefix > max_prefix) throw std::invalid_argument("cache key: ECS prefix longer than the address");
  bytes_[0] = static_cast<std::uint8_t>(qtype);
  bytes_[1] = static_cast<std::uint8_t>(qtype >> 8);
  bytes_[2] = static_cast<std::uint8_t>((flags & 0x07) | (static_cast<std::uint8_t>(ecs.family) << 3));
  bytes_[3] = ecs.family == EcsFamily::none ? 0 : ecs.prefix;
  bytes_[4] = static_cast<std::uint8_t>(name_len);
  std::size_t pos = kKeyFixedBytes;
  const std::size_t abytes = ecs_bytes(bytes_[3]);
  std::memcpy(&bytes_[pos], ecs.address.data(), abytes);
  if (bytes_[3] % 8 != 0) bytes_[pos + abytes - 1] &= static_cast<std::uint8_t>(0xFF00u >> (bytes_[3] % 8));
  pos += abytes;
  lowercase_copy(&bytes_[pos], qname_wire);
  pos += name_len;
  size_ = static_cast<std::uint16_t>(pos);
  hash_ = hash_blob(blob());
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

}  // namespace dnsarena::frozen3

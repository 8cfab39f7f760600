// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/relaxed_copy.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Word-wise copies in and out of the arena through relaxed atomic loads and stores.
//
// Lock-free readers may copy bytes that a writer is overwriting (a region recycled under
// them); the seqlock check then throws the copy away. For that race to be defined
// behaviour, both sides access the shared bytes as atomics. On x86-64 a relaxed 8-byte
// atomic load or store is a plain mov, so this costs nothing over memcpy of whole words.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dnsarena::frozen2 {

// REQUIRES: src 8-byte aligned; dst has room for padded (multiple of 8) `bytes`.
inline void relaxed_copy_out(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  const auto* s = reinterpret_cast<const std::uint64_t*>(src);
  const std::size_t words = (bytes + 7) / 8;
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t w = __atomic_load_n(s + i, __ATOMIC_RELAXED);
    std::memcpy(dst + 8 * i, &w, 8);
  }
}

// REQUIRES: dst 8-byte aligned; `bytes` a multiple of 8.
inline void relaxed_copy_in(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  auto* d = reinterpret_cast<std::uint64_t*>(dst);
  for (std::size_t i = 0; i < bytes / 8; ++i) {
    std::uint64_t w;
    std::memcpy(&w, src + 8 * i, 8);
    __atomic_store_n(d + i, w, __ATOMIC_RELAXED);
  }
}

inline std::uint16_t relaxed_load_u16(const std::uint8_t* p8aligned) {
  const std::uint64_t w = __atomic_load_n(reinterpret_cast<const std::uint64_t*>(p8aligned), __ATOMIC_RELAXED);
  return static_cast<std::uint16_t>(w & 0xFFFF);  // little-endian: entry_len is the low 16 bits
}

}  // namespace dnsarena::frozen2

// SPDX-License-Identifier: GPL-3.0-or-later
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

namespace dnsarena::cache {

// REQUIRES: src 8-byte aligned; dst has room for padded (multiple of 8) `bytes`.
inline void relaxed_copy_out(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  const auto* s = reinterpret_cast<const std::uint64_t*>(src);
  const std::size_t words = (bytes + 7) / 8;
#pragma GCC unroll 4
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t w = __atomic_load_n(s + i, __ATOMIC_RELAXED);
    std::memcpy(dst + 8 * i, &w, 8);
  }
}

// REQUIRES: dst 8-byte aligned; `bytes` a multiple of 8.
inline void relaxed_copy_in(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  auto* d = reinterpret_cast<std::uint64_t*>(dst);
#pragma GCC unroll 4
  for (std::size_t i = 0; i < bytes / 8; ++i) {
    std::uint64_t w;
    std::memcpy(&w, src + 8 * i, 8);
    __atomic_store_n(d + i, w, __ATOMIC_RELAXED);
  }
}

// The bytes at byte offset p of the 8-aligned words `w`, in the low bits of the result
// (little-endian): byte p in bits 0-7, and so on. Only the one or two aligned words that
// hold bytes [p, p + n) are loaded (each once, relaxed), so a reader whose p + n stays
// within an entry's padded length never loads a word outside it; a funnel shift
// (shrd) joins the two. REQUIRES: 1 <= n <= 8. Bytes from n on are unspecified.
[[gnu::always_inline]] inline std::uint64_t relaxed_load_at(const std::uint64_t* w, std::size_t p, std::size_t n) {
  const std::uint64_t lo = __atomic_load_n(w + p / 8, __ATOMIC_RELAXED);
  const std::uint64_t hi = __atomic_load_n(w + (p + n - 1) / 8, __ATOMIC_RELAXED);
  const unsigned shift = static_cast<unsigned>(p & 7) * 8;
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>(((static_cast<u128>(hi) << 64) | lo) >> shift);
}

// The byte at byte offset p of the 8-aligned words `w`: one relaxed load.
[[gnu::always_inline]] inline std::uint8_t relaxed_load_byte(const std::uint64_t* w, std::size_t p) {
  return static_cast<std::uint8_t>(__atomic_load_n(w + p / 8, __ATOMIC_RELAXED) >> ((p & 7) * 8));
}

inline std::uint16_t relaxed_load_u16(const std::uint8_t* p8aligned) {
  const std::uint64_t w = __atomic_load_n(reinterpret_cast<const std::uint64_t*>(p8aligned), __ATOMIC_RELAXED);
  return static_cast<std::uint16_t>(w & 0xFFFF);  // little-endian: entry_len is the low 16 bits
}

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for DNS names in uncompressed wire form (length-prefixed labels, root at end).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace dnsarena::wire {

inline constexpr std::size_t kMaxNameWire = 255;

// Length of the wire name at the start of `bytes`, or 0 if it is not a valid uncompressed
// name (label > 63, total > 255, runs past the end, or contains a compression pointer).
std::size_t wire_name_length(std::span<const std::uint8_t> bytes);

// The offset just past the (possibly compressed) name at `at` in message `m`, or 0 when it
// runs off the end or uses a reserved label type (0x40, 0x80). Nothing is decompressed.
inline std::size_t skip_wire_name(std::span<const std::uint8_t> m, std::size_t at) {
  while (at < m.size()) {
    const std::uint8_t len = m[at];
    if (len == 0) return at + 1;
    if ((len & 0xC0) == 0xC0) return at + 2 <= m.size() ? at + 2 : 0;
    if (len & 0xC0) return 0;
    at += 1u + len;
  }
  return 0;
}

inline std::uint8_t ascii_lower(std::uint8_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Lowercases the ASCII letters of eight bytes at once (SWAR): a byte gets 0x20 ORed in
// when it is in 'A'..'Z'. Label length bytes (1..63) and non-ASCII bytes are left alone.
// Eight bytes for about the instructions a byte-at-a-time loop spends on one.
inline std::uint64_t lower8(std::uint64_t w) {
  constexpr std::uint64_t k7f = 0x7F7F7F7F7F7F7F7FULL, k80 = 0x8080808080808080ULL;
  const std::uint64_t low7 = w & k7f;
  const std::uint64_t ge_a = low7 + 0x3F3F3F3F3F3F3F3FULL;  // high bit set when byte >= 'A'
  const std::uint64_t gt_z = low7 + 0x2525252525252525ULL;  // high bit set when byte > 'Z'
  const std::uint64_t upper = (ge_a ^ gt_z) & ~w & k80;
  return w | (upper >> 2);
}

// Copies a wire name lowercased (dst may be src). REQUIRES: dst has src.size() bytes.
// Inline: it is part of every key build (cache_key.cpp), where a call cost a third of it.
inline void lowercase_copy(std::uint8_t* dst, std::span<const std::uint8_t> src) {
  const std::size_t n = src.size();
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = ascii_lower(src[i]);
    return;
  }
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, src.data() + i, 8);
    w = lower8(w);
    std::memcpy(dst + i, &w, 8);
  }
  if (i < n) {
    // The last 8 bytes, overlapping what is already written (lowercasing is idempotent):
    // one more word instead of up to 7 single bytes.
    std::uint64_t w;
    std::memcpy(&w, src.data() + n - 8, 8);
    w = lower8(w);
    std::memcpy(dst + n - 8, &w, 8);
  }
}

// Case-insensitive equality of two wire names of the same length.
bool wire_names_equal_ci(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

// "www.example.com" or "www.example.com." -> wire form. Throws std::invalid_argument.
std::basic_string<std::uint8_t> name_to_wire(std::string_view text);
// Wire form -> dotted text with a trailing dot ("." for the root).
std::string wire_to_text(std::span<const std::uint8_t> wire);

}  // namespace dnsarena::wire

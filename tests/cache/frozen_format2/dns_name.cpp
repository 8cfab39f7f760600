// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/dns_name.cpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
#include "dns_name.hpp"

#include <cstring>
#include <stdexcept>

namespace dnsarena::frozen2 {

std::size_t wire_name_length(std::span<const std::uint8_t> bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::uint8_t len = bytes[pos];
    if (len == 0) return pos + 1 <= kMaxNameWire ? pos + 1 : 0;
    if (len > 63) return 0;  // also rejects compression pointers (0xC0..)
    pos += 1 + len;
    if (pos >= kMaxNameWire) return 0;
  }
  return 0;
}

namespace {
// Lowercases the ASCII letters of eight bytes at once (SWAR): a byte gets 0x20 ORed in
// when it is in 'A'..'Z'. Label length bytes (1..63) and non-ASCII bytes are left alone.
// NOTE: the byte-at-a-time loop cost ~9 instructions per byte, about a quarter of a
// cache hit's instructions (callgrind, seed-mix names); this costs ~12 per 8 bytes.
inline std::uint64_t lower8(std::uint64_t w) {
  constexpr std::uint64_t k7f = 0x7F7F7F7F7F7F7F7FULL, k80 = 0x8080808080808080ULL;
  const std::uint64_t low7 = w & k7f;
  const std::uint64_t ge_a = low7 + 0x3F3F3F3F3F3F3F3FULL;  // high bit set when byte >= 'A'
  const std::uint64_t gt_z = low7 + 0x2525252525252525ULL;  // high bit set when byte > 'Z'
  const std::uint64_t upper = (ge_a ^ gt_z) & ~w & k80;
  return w | (upper >> 2);
}
}  // namespace

void lowercase_copy(std::uint8_t* dst, std::span<const std::uint8_t> src) {
  std::size_t i = 0;
  for (; i + 8 <= src.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, src.data() + i, 8);
    w = lower8(w);
    std::memcpy(dst + i, &w, 8);
  }
  for (; i < src.size(); ++i) dst[i] = ascii_lower(src[i]);
}

bool wire_names_equal_ci(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

std::basic_string<std::uint8_t> name_to_wire(std::string_view text) {
  std::basic_string<std::uint8_t> out;
  if (text == "." || text.empty()) {
    out.push_back(0);
    return out;
  }
  if (text.back() == '.') text.remove_suffix(1);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t dot = text.find('.', start);
    if (dot == std::string_view::npos) dot = text.size();
    const std::size_t len = dot - start;
    if (len == 0 || len > 63) throw std::invalid_argument("bad label in name '" + std::string(text) + "'");
    out.push_back(static_cast<std::uint8_t>(len));
    out.append(reinterpret_cast<const std::uint8_t*>(text.data() + start), len);
    start = dot + 1;
  }
  out.push_back(0);
  if (out.size() > kMaxNameWire) throw std::invalid_argument("name longer than 255 bytes: " + std::string(text));
  return out;
}

std::string wire_to_text(std::span<const std::uint8_t> wire) {
  std::string out;
  std::size_t pos = 0;
  while (pos < wire.size() && wire[pos] != 0) {
    const std::uint8_t len = wire[pos];
    if (pos + 1 + len > wire.size()) break;
    out.append(reinterpret_cast<const char*>(wire.data() + pos + 1), len);
    out.push_back('.');
    pos += 1 + len;
  }
  return out.empty() ? "." : out;
}

}  // namespace dnsarena::frozen2

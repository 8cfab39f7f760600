// SPDX-License-Identifier: GPL-3.0-or-later
// Owned bytes of DNS wire data (names, rdata, whole messages): the one byte-string type of
// the project. The same type as wire::name_to_wire's result, so a wire name converts
// without a copy; a std::basic_string so short values need no heap allocation and `+=`
// appends.
#pragma once
#include <cstdint>
#include <string>

namespace dnsarena::common {

using Bytes = std::basic_string<std::uint8_t>;

// Appends `v` in network byte order, as DNS wire fields are written.
inline void append_u16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}
inline void append_u32(Bytes& b, std::uint32_t v) {
  append_u16(b, static_cast<std::uint16_t>(v >> 16));
  append_u16(b, static_cast<std::uint16_t>(v));
}

}  // namespace dnsarena::common

// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns_name.hpp"

#include <cstring>
#include <stdexcept>

namespace dnsarena::wire {

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

}  // namespace dnsarena::wire

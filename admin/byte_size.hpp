// SPDX-License-Identifier: GPL-3.0-or-later
// "N", "NK", "NM" or "NG" as bytes, for the commands' --arena-bytes.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dnsarena::admin {

inline std::uint64_t parse_byte_size(const std::string& text, const char* flag) {
  char* end = nullptr;
  std::uint64_t v = std::strtoull(text.c_str(), &end, 10);
  const std::string suffix(end);
  if (suffix == "K") v <<= 10;
  else if (suffix == "M") v <<= 20;
  else if (suffix == "G") v <<= 30;
  else if (!suffix.empty() || end == text.c_str())
    throw std::invalid_argument(std::string(flag) + " '" + text + "': use N, NK, NM or NG");
  return v;
}

}  // namespace dnsarena::admin

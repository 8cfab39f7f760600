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

}  // namespace dnsarena::common

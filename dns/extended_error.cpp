// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/extended_error.hpp"

#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

std::size_t write_ede_option(ExtendedError code, std::uint8_t* out) {
  put16(out, kOptionCodeEde);
  put16(out + 2, 2);
  put16(out + 4, static_cast<std::uint16_t>(code));
  return kEdeOptionBytes;
}

}  // namespace dnsarena::dns

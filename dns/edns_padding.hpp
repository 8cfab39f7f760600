// SPDX-License-Identifier: GPL-3.0-or-later
// EDNS(0) Padding (RFC 7830, option code 12) of responses over encrypted transports, by
// the block-length policy of RFC 8467 4.1: a response is padded to a multiple of 468
// bytes, so its length says little about which name was asked.
//
// Applied at send time, into the outgoing buffer: the cache keeps unpadded answers, and
// plain UDP/TCP answers are never padded. Only a response that carries an OPT record (the
// query had EDNS; RFC 7830 3: no padding without EDNS) is padded.
//
//   pad_response(msg, block, out, cap)   copies msg to out with a Padding option of zeros
//       appended to the OPT record's RDATA (RDLENGTH adjusted), so that the result is a
//       multiple of `block` bytes. O(message): one walk to find the OPT record, one copy.
//       Returns the padded size, or 0 when msg is left as it is: no OPT record, a message
//       that does not parse, or a padded size over `cap` or 65535.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace dnsarena::dns {

inline constexpr std::uint16_t kEdnsPaddingOption = 12;
inline constexpr std::size_t kResponsePaddingBlock = 468;  // RFC 8467 4.1

std::size_t pad_response(std::span<const std::uint8_t> msg, std::size_t block, std::uint8_t* out, std::size_t cap);

}  // namespace dnsarena::dns

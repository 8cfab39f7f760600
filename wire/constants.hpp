// SPDX-License-Identifier: GPL-3.0-or-later
// The DNS wire format's numbers, once: header flag bits, rcodes (with the extended
// BADVERS), RR types and classes, EDNS option codes, and big-endian 16-bit access.
//
// Purpose: every module that reads or writes DNS messages (cache/'s response writer, dns/,
// workers/, sim/, bench/, the tests) names these numbers from here. Installed with the
// cache library: its public response_writer.hpp names the header flag bits.
//
// Costs: constants and two inline byte helpers; nothing to link.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dnsarena::wire {

// Header (RFC 1035 4.1.1), 12 bytes: id, flags, qdcount, ancount, nscount, arcount.
inline constexpr std::size_t kHeaderBytes = 12;
// The flags word: |QR|opcode(4)|AA|TC|RD|RA|Z|AD|CD|rcode(4)|
inline constexpr std::uint16_t kFlagQr = 0x8000, kFlagAa = 0x0400, kFlagTc = 0x0200, kFlagRd = 0x0100,
                               kFlagRa = 0x0080, kFlagAd = 0x0020, kFlagCd = 0x0010;
inline constexpr std::uint16_t kOpcodeMask = 0x7800;  // opcode bits of the flags word

// Rcodes. Values above 15 are extended (RFC 6891): the upper 8 bits go in the OPT record,
// the lower 4 in the header.
inline constexpr std::uint16_t kRcodeNoError = 0, kRcodeFormErr = 1, kRcodeServFail = 2, kRcodeNxDomain = 3,
                               kRcodeNotImp = 4, kRcodeRefused = 5, kRcodeBadVers = 16,
                               kRcodeBadCookie = 23;  // RFC 7873 8

// RR types, meta types and the one class we serve (mnemonics written as words: kTypeAaaa
// is AAAA).
inline constexpr std::uint16_t kTypeA = 1, kTypeNs = 2, kTypeCname = 5, kTypeSoa = 6, kTypePtr = 12, kTypeMx = 15,
                               kTypeTxt = 16, kTypeAaaa = 28, kTypeDname = 39, kTypeOpt = 41, kTypeDs = 43,
                               kTypeRrsig = 46, kTypeNsec = 47, kTypeNsec3 = 50, kTypeIxfr = 251, kTypeAxfr = 252,
                               kTypeAny = 255;
inline constexpr std::uint16_t kClassIn = 1;

// EDNS (RFC 6891): the payload we advertise (the DNS flag day 2020 value), the DO bit of
// the OPT's flags, and option codes.
inline constexpr std::uint16_t kEdnsPayload = 1232;
inline constexpr std::uint16_t kEdnsFlagDo = 0x8000;
inline constexpr std::uint16_t kOptionEcs = 8;  // Client Subnet (RFC 7871)
inline constexpr std::size_t kOptRecordBytes = 11;  // root owner, type, class, TTL, rdlength

inline std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void put32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

}  // namespace dnsarena::wire

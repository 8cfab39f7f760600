// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/response_writer.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Builds a complete DNS response from a cached entry into a caller's buffer.
//
// Layout written: 12-byte header (the query's ID, QR, opcode, RD and CD copied from the
// query, RA set, AD when the entry had it and the client asked with DO or AD, the entry's
// rcode), the question exactly as the client wrote it (its case kept), then the records
// with their remaining TTLs, then an OPT record when the query had EDNS.
// Owner names equal to the qname are written as a 2-byte pointer to the question (offset
// 12); other owners, and the names inside NS, CNAME, PTR, MX and SOA rdata, are
// compressed against every name written before them (name_compressor.hpp), so a response
// is no larger than an authoritative server's for the same records. Other rdata is
// copied verbatim.
// When the answer or authority records do not fit in min(buffer, client's size limit)
// the response carries only the header, question and OPT, with TC set and the entry's
// rcode kept, as RFC 2181 section 9 allows; when only additional records do not fit,
// they are left out without TC.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "entry_codec.hpp"

namespace dnsarena::frozen2 {

inline constexpr std::uint16_t kFlagQr = 0x8000;
inline constexpr std::uint16_t kFlagAa = 0x0400;
inline constexpr std::uint16_t kFlagTc = 0x0200;
inline constexpr std::uint16_t kFlagRd = 0x0100;
inline constexpr std::uint16_t kFlagRa = 0x0080;
inline constexpr std::uint16_t kFlagAd = 0x0020;
inline constexpr std::uint16_t kFlagCd = 0x0010;
inline constexpr std::uint16_t kOpcodeMask = 0x7800;

struct QueryInfo {
  std::uint16_t id = 0;
  std::uint16_t flags = kFlagRd;           // the query's header flags word
  std::span<const std::uint8_t> qname;     // as the client wrote it
  std::uint16_t qtype = 0;
  std::uint16_t qclass = 1;
};

struct ResponseOptions {
  std::size_t max_size = 65535;            // the client's limit (512 for UDP without EDNS)
  bool edns = false;                       // append an OPT record
  std::uint16_t edns_udp_size = 1232;      // our advertised payload size
  bool edns_do = false;                    // DO bit in the OPT we send
  std::span<const std::uint8_t> edns_options;  // raw OPT rdata to include (e.g. ECS reply)
};

struct ResponseResult {
  std::size_t size = 0;    // 0: the buffer cannot hold even the header and question
  bool truncated = false;  // TC set, records left out
};

// REQUIRES: `entry` is valid(). Records are re-walked from the start.
ResponseResult write_response(EntryReader& entry, const QueryInfo& query, std::uint32_t now,
                              const ResponseOptions& options, std::uint8_t* out, std::size_t capacity);

// Remaining TTL of a record inserted at `inserted` with `ttl`, at `now`.
inline std::uint32_t remaining_ttl(std::uint32_t ttl, std::uint32_t inserted, std::uint32_t now) {
  const std::uint32_t elapsed = now > inserted ? now - inserted : 0;
  return ttl > elapsed ? ttl - elapsed : 0;
}

}  // namespace dnsarena::frozen2

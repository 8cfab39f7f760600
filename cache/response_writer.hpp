// SPDX-License-Identifier: GPL-3.0-or-later
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
// they are left out without TC, except a referral's glue (no answer, NS in authority):
// then the records that fit go out with TC (RFC 9471), as Knot DNS does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "../wire/constants.hpp"
#include "entry_codec.hpp"

namespace dnsarena::cache {

struct QueryInfo {
  std::uint16_t id = 0;
  std::uint16_t flags = wire::kFlagRd;           // the query's header flags word
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
  // RFC 8482 section 4.1 for ANY over UDP: only the answer section's first RRset (and the
  // RRSIGs over it) is written; rcode and authority stay as they are.
  bool one_answer_rrset = false;
  // Nonzero: every record's TTL is written as this, not as its remaining TTL: an expired
  // entry answered stale (RFC 8767 section 4 recommends 30 s). Only write_response()
  // reads it; Cache::lookup_response() answers fresh entries and ignores it.
  std::uint32_t stale_ttl = 0;
  // An entry inserted at or before this wall-clock second is answered without AD: the
  // config in force no longer trusts the upstream that set it (workers/ad_trust.hpp).
  // 0: every entry's AD stands. Compared only for entries that carry AD.
  std::uint32_t ad_trusted_after = 0;
};

struct ResponseResult {
  std::size_t size = 0;    // 0: the buffer cannot hold even the header and question
  bool truncated = false;  // TC set, records left out
  // The entry answered: its absolute expiry and TTL (wall-clock seconds), so a caller can
  // tell a hit near the end of its TTL (prefetch). Set with every response written.
  std::uint32_t expire = 0;
  std::uint32_t ttl = 0;
};

// REQUIRES: `entry` is valid(). Records are re-walked from the start.
ResponseResult write_response(EntryReader& entry, const QueryInfo& query, std::uint32_t now,
                              const ResponseOptions& options, std::uint8_t* out, std::size_t capacity);

// Remaining TTL of a record inserted at `inserted` with `ttl`, at `now`.
inline std::uint32_t remaining_ttl(std::uint32_t ttl, std::uint32_t inserted, std::uint32_t now) {
  const std::uint32_t elapsed = now > inserted ? now - inserted : 0;
  return ttl > elapsed ? ttl - elapsed : 0;
}

}  // namespace dnsarena::cache

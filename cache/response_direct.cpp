// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: walks the entry layout of entry_format.hpp (as EntryReader does).
#include "response_direct.hpp"

#include <cstring>

#include "../wire/name_compressor.hpp"

namespace dnsarena::cache {

namespace {

inline std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline std::uint32_t le32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86-64 and every target we build for are little-endian (entry_format.hpp)
}

}  // namespace

bool write_response_direct(std::span<const std::uint8_t> entry, std::size_t key_length, const QueryInfo& q,
                           std::uint32_t now, const ResponseOptions& o, std::uint8_t* out, std::size_t capacity,
                           ResponseResult* result) {
  if (o.one_answer_rrset) return false;
  const std::uint8_t* e = entry.data();
  if (entry.size() < kEntryKeyOffset + key_length + 3) return false;
  const std::size_t len = std::size_t{e[0]} | (std::size_t{e[1]} << 8);
  const std::uint8_t info = e[kEntryInfoOffset];
  if (len > entry.size() || (info & kInfoWideCounts) != 0 || e[3] != 0) return false;
  const std::uint32_t expire = le32(e + kEntryExpireOffset);
  const std::uint32_t entry_ttl = le32(e + kEntryTtlOffset);
  const std::uint32_t inserted = expire - entry_ttl;
  const std::uint16_t qtype = static_cast<std::uint16_t>(e[kEntryKeyOffset] | (e[kEntryKeyOffset + 1] << 8));
  std::size_t at = kEntryKeyOffset + key_length;
  if (at + 3 > len) return false;
  const std::uint8_t counts[3] = {e[at], e[at + 1], e[at + 2]};
  at += 3;

  const std::size_t records_limit = direct_write_question(q, o, out, capacity);
  if (records_limit == 0) return false;
  std::size_t pos = 12 + q.qname.size() + 4;
  std::uint32_t records = 0;
  // Most records carry every elision bit (owner, type, TTL and class the entry's): their
  // rdata length is all that changes, and its checks are the only per-record work.
  const std::uint32_t entry_rttl = remaining_ttl(entry_ttl, inserted, now);
  const std::size_t qtype_rdlen = qtype == wire::kTypeA ? 4 : qtype == wire::kTypeAaaa ? 16 : 0;
  const bool qtype_plain = wire::compressible_rdata(qtype).names == 0;
  const std::uint64_t elided_word0 = record_head_word0(qtype, 1, entry_rttl);
  constexpr std::uint8_t kElided = kDescOwnerIsQname | kDescTypeIsQtype | kDescTtlIsEntryTtl | kDescClassIn;
  constexpr std::uint8_t kImpliedAll = kElided | kDescRdlenImplied;
  constexpr std::uint8_t kImpliedMask = kImpliedAll | kDescReservedMask;
  while (at < len) {
    const std::uint8_t desc = e[at++];
    std::uint16_t type = qtype, rclass = 1;
    std::uint32_t rttl = entry_rttl;
    std::size_t rdlen;
    std::uint64_t word0 = elided_word0;
    bool plain = qtype_plain;
    if ((desc & kImpliedMask) == kImpliedAll) {
      // The commonest record (A or AAAA, every elision bit, no reserved bit): one test.
      rdlen = qtype_rdlen;
      if (rdlen == 0) return false;
    } else if ((desc & kDescReservedMask) != 0 || (desc & kDescOwnerIsQname) == 0) {
      return false;  // owners other than the qname are compressed by write_response(): not here
    } else if ((desc & kElided) == kElided && (desc & kDescRdlenU8)) {
      if (at + 1 > len) return false;
      rdlen = e[at++];
    } else {
      if (!(desc & kDescTypeIsQtype)) {
        if (at + 2 > len) return false;
        type = be16(e + at);
        at += 2;
        plain = wire::compressible_rdata(type).names == 0;
      }
      if (!(desc & kDescClassIn)) {
        if (at + 2 > len) return false;
        rclass = be16(e + at);
        at += 2;
      }
      if (!(desc & kDescTtlIsEntryTtl)) {
        if (at + 4 > len) return false;
        rttl = remaining_ttl((std::uint32_t{be16(e + at)} << 16) | be16(e + at + 2), inserted, now);
        at += 4;
      }
      if (desc & kDescRdlenImplied) {
        rdlen = type == wire::kTypeA ? 4 : type == wire::kTypeAaaa ? 16 : 0;
        if (rdlen == 0) return false;
      } else if (desc & kDescRdlenU8) {
        if (at + 1 > len) return false;
        rdlen = e[at++];
      } else {
        if (at + 2 > len) return false;
        rdlen = be16(e + at);
        at += 2;
      }
      word0 = record_head_word0(type, rclass, rttl);
    }
    if (at + rdlen > len || !plain) return false;
    if (pos + 12 + rdlen > records_limit) return false;  // TC or left-out records: write_response()
    put_record_head(out + pos, word0, rttl, rdlen);
    copy_bytes(out + pos + 12, e + at, rdlen);
    pos += 12 + rdlen;
    at += rdlen;
    ++records;
  }
  if (records != std::uint32_t{counts[0]} + counts[1] + counts[2]) return false;

  direct_write_header(info, inserted, counts, q, o, out, pos, result);
  result->expire = expire;
  result->ttl = entry_ttl;
  return true;
}

}  // namespace dnsarena::cache

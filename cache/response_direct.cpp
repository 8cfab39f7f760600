// FORMAT-DEPENDENT: walks the entry layout of entry_format.hpp (as EntryReader does).
#include "response_direct.hpp"

#include <cstring>

#include "name_compressor.hpp"

namespace dnsarena::cache {

namespace {

inline void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
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
  if (len > entry.size() || (info & (0xC0 | kInfoWideCounts)) != 0 || e[3] != 0) return false;
  const std::uint32_t expire = le32(e + kEntryExpireOffset);
  const std::uint32_t entry_ttl = le32(e + kEntryTtlOffset);
  const std::uint32_t inserted = expire - entry_ttl;
  const std::uint16_t qtype = static_cast<std::uint16_t>(e[kEntryKeyOffset] | (e[kEntryKeyOffset + 1] << 8));
  std::size_t at = kEntryKeyOffset + key_length;
  if (at + 3 > len) return false;
  const std::uint8_t counts[3] = {e[at], e[at + 1], e[at + 2]};
  at += 3;

  const std::size_t limit = capacity < o.max_size ? capacity : o.max_size;
  const std::size_t question_end = 12 + q.qname.size() + 4;
  const std::size_t opt = opt_record_size(o);
  if (question_end + opt > limit) return false;
  const std::size_t records_limit = limit - opt;

  std::memcpy(out + 12, q.qname.data(), q.qname.size());
  put16(out + 12 + q.qname.size(), q.qtype);
  put16(out + 14 + q.qname.size(), q.qclass);
  std::size_t pos = question_end;
  std::uint32_t records = 0;
  while (at < len) {
    const std::uint8_t desc = e[at++];
    // Owners other than the qname are compressed by write_response(): not here.
    if ((desc & kDescReservedMask) != 0 || (desc & kDescOwnerIsQname) == 0) return false;
    std::uint16_t type = qtype, rclass = 1;
    std::uint32_t ttl = entry_ttl;
    if (!(desc & kDescTypeIsQtype)) {
      if (at + 2 > len) return false;
      type = be16(e + at);
      at += 2;
    }
    if (!(desc & kDescClassIn)) {
      if (at + 2 > len) return false;
      rclass = be16(e + at);
      at += 2;
    }
    if (!(desc & kDescTtlIsEntryTtl)) {
      if (at + 4 > len) return false;
      ttl = (std::uint32_t{be16(e + at)} << 16) | be16(e + at + 2);
      at += 4;
    }
    std::size_t rdlen;
    if (desc & kDescRdlenImplied) {
      rdlen = type == kTypeA ? 4 : type == kTypeAAAA ? 16 : 0;
      if (rdlen == 0) return false;
    } else if (desc & kDescRdlenU8) {
      if (at + 1 > len) return false;
      rdlen = e[at++];
    } else {
      if (at + 2 > len) return false;
      rdlen = be16(e + at);
      at += 2;
    }
    if (at + rdlen > len || compressible_rdata(type).names != 0) return false;
    if (pos + 12 + rdlen > records_limit) return false;  // TC or left-out records: write_response()
    // The 12 fixed bytes |C0 0C|type|class|ttl|rdlength| (big-endian) in two stores.
    const std::uint32_t rttl = remaining_ttl(ttl, inserted, now);
    const std::uint64_t w0 = 0x0CC0u | std::uint64_t{__builtin_bswap16(type)} << 16 |
                             std::uint64_t{__builtin_bswap16(rclass)} << 32 |
                             std::uint64_t{__builtin_bswap16(static_cast<std::uint16_t>(rttl >> 16))} << 48;
    const std::uint32_t w1 = std::uint32_t{__builtin_bswap16(static_cast<std::uint16_t>(rttl))} |
                             std::uint32_t{__builtin_bswap16(static_cast<std::uint16_t>(rdlen))} << 16;
    std::memcpy(out + pos, &w0, 8);
    std::memcpy(out + pos + 8, &w1, 4);
    if (rdlen == 4) std::memcpy(out + pos + 12, e + at, 4);  // A: no library call
    else if (rdlen == 16) std::memcpy(out + pos + 12, e + at, 16);  // AAAA
    else std::memcpy(out + pos + 12, e + at, rdlen);
    pos += 12 + rdlen;
    at += rdlen;
    ++records;
  }
  if (records != std::uint32_t{counts[0]} + counts[1] + counts[2]) return false;

  std::uint16_t flags = static_cast<std::uint16_t>(kFlagQr | kFlagRa | (q.flags & (kOpcodeMask | kFlagRd | kFlagCd)) |
                                                   (info & kInfoRcodeMask));
  if ((info & kInfoAuthenticData) && (o.edns_do || (q.flags & kFlagAd))) flags |= kFlagAd;
  std::uint16_t additional = counts[2];
  if (o.edns) {
    pos += write_opt_record(o, out + pos);
    ++additional;
  }
  put16(out, q.id);
  put16(out + 2, flags);
  put16(out + 4, 1);
  put16(out + 6, counts[0]);
  put16(out + 8, counts[1]);
  put16(out + 10, additional);
  *result = {pos, false};
  return true;
}

}  // namespace dnsarena::cache

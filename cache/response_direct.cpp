// FORMAT-DEPENDENT: walks the entry layout of entry_format.hpp (as EntryReader does).
#include "response_direct.hpp"

#include <cstring>

#include "name_compressor.hpp"

namespace dnsarena::cache {

namespace {

inline std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline std::uint32_t le32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86-64 and every target we build for are little-endian (entry_format.hpp)
}

// Copies n bytes without a library call when n is small: whole words, the last one
// overlapping the one before (no byte past dst + n is written). Longer runs (TXT rdata)
// go to memcpy, which moves them 32 bytes at a time.
inline void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  if (n > 32) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    std::uint64_t w;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, src + i, 8);
      std::memcpy(dst + i, &w, 8);
    }
    std::memcpy(&w, src + n - 8, 8);
    std::memcpy(dst + n - 8, &w, 8);
  } else if (n >= 4) {
    std::uint32_t w;
    std::memcpy(&w, src, 4);
    std::memcpy(dst, &w, 4);
    std::memcpy(&w, src + n - 4, 4);
    std::memcpy(dst + n - 4, &w, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// The 12 fixed bytes of a record whose owner is the question's name:
// |C0 0C|type|class|ttl|rdlength| (big-endian), as one u64 and one u32 store. The first
// word depends on type, class and TTL only, so a run of records with every elision bit
// shares one (record_head_word0, computed once per entry); each byte swap is one bswap
// where building the words from 16-bit swaps cost ~15 instructions a record (callgrind).
inline std::uint64_t record_head_word0(std::uint16_t type, std::uint16_t rclass, std::uint32_t ttl) {
  return __builtin_bswap64((std::uint64_t{0xC00C} << 48) | (std::uint64_t{type} << 32) | (std::uint64_t{rclass} << 16) |
                           (ttl >> 16));
}
inline void put_record_head(std::uint8_t* p, std::uint64_t word0, std::uint32_t ttl, std::size_t rdlen) {
  const std::uint32_t w1 = __builtin_bswap32((ttl << 16) | static_cast<std::uint32_t>(rdlen));
  std::memcpy(p, &word0, 8);
  std::memcpy(p + 8, &w1, 4);
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
  const std::size_t opt = o.edns ? 11 + o.edns_options.size() : 0;  // opt_record_size()
  if (question_end + opt > limit) return false;
  const std::size_t records_limit = limit - opt;

  copy_bytes(out + 12, q.qname.data(), q.qname.size());
  const std::uint32_t qtype_qclass = __builtin_bswap32((std::uint32_t{q.qtype} << 16) | q.qclass);
  std::memcpy(out + 12 + q.qname.size(), &qtype_qclass, 4);
  std::size_t pos = question_end;
  std::uint32_t records = 0;
  // Most records carry every elision bit (owner, type, TTL and class the entry's): their
  // rdata length is all that changes, and its checks are the only per-record work.
  const std::uint32_t entry_rttl = remaining_ttl(entry_ttl, inserted, now);
  const std::size_t qtype_rdlen = qtype == kTypeA ? 4 : qtype == kTypeAAAA ? 16 : 0;
  const bool qtype_plain = compressible_rdata(qtype).names == 0;
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
        plain = compressible_rdata(type).names == 0;
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

  std::uint16_t flags = static_cast<std::uint16_t>(kFlagQr | kFlagRa | (q.flags & (kOpcodeMask | kFlagRd | kFlagCd)) |
                                                   (info & kInfoRcodeMask));
  if ((info & kInfoAuthenticData) && (o.edns_do || (q.flags & kFlagAd))) flags |= kFlagAd;
  std::uint32_t additional = counts[2];
  if (o.edns) {
    pos += write_opt_record(o, out + pos);
    ++additional;
  }
  // |id|flags| and |qdcount 1|ancount|nscount|arcount|, big-endian, in two stores.
  const std::uint32_t id_flags = __builtin_bswap32((std::uint32_t{q.id} << 16) | flags);
  const std::uint64_t section_counts = __builtin_bswap64((std::uint64_t{1} << 48) | (std::uint64_t{counts[0]} << 32) |
                                                         (std::uint64_t{counts[1]} << 16) | additional);
  std::memcpy(out, &id_flags, 4);
  std::memcpy(out + 4, &section_counts, 8);
  *result = {pos, false};
  return true;
}

}  // namespace dnsarena::cache

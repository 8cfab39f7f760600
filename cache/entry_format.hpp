// SPDX-License-Identifier: GPL-3.0-or-later
// The cache entry: one packed, variable-length run of bytes in the arena. FORMAT-DEPENDENT.
//
// Every entry starts 8-byte aligned and is padded with zeros to a multiple of 8.
//
//   offset size   field       meaning
//   0      2      entry_len   bytes of this entry before padding (little-endian)
//   2      1      info        |7 6|5 |4 |3 2 1 0|
//                             | V |AD|WC| rcode |  rcode: low 4 bits of the answer's RCODE
//                                                   WC: section counts are u16 (else u8)
//                                                   AD: answered with AD (the upstream's,
//                                                       trusted, or a secure verdict)
//                                                   V: DNSSEC verdict (EntryVerdict): 0 not
//                                                      validated, 1 secure, 2 insecure,
//                                                      3 indeterminate (bogus is never cached)
//   3      1      reserved    0
//   4      4      expire      absolute wall-clock second at which the entry dies
//   8      4      ttl         the entry's TTL when inserted (so inserted = expire - ttl)
//   12     k      key blob    see cache_key.hpp (qtype, key flags, ECS, lowercase qname)
//   12+k   3|6    counts      answer, authority, additional record counts (u8 or u16 each)
//   ...           records     count records, back to back, sections in order
//
// Record (no alignment):
//
//   size   field       present when
//   1      desc        always:  |7 6|5    |4     |3  |2   |1    |0     |
//                               | 0 |RD8  |RDIMP |CIN|TTLE|TYPEQ|OWNERQ|
//   n      owner       !OWNERQ: owner name, wire form (else the owner is the qname)
//   2      type        !TYPEQ:  big-endian (else the type is the qtype)
//   2      class       !CIN:    big-endian (else class IN)
//   4      ttl         !TTLE:   big-endian (else the entry's ttl)
//   1|2    rdlength    !RDIMP:  u8 when RD8, else u16 big-endian (RDIMP: A => 4, AAAA => 16)
//   r      rdata       wire form, names inside uncompressed
//
// Against the seed's five changes: (1) no growable containers at all, one run of bytes;
// (2) sections are three small counts, flags are bits; (3) the owner is elided when it is
// the qname, and so are type, class and TTL when they equal the entry's; (4) there is no
// per-type union: A costs 1+4 bytes, AAAA 1+16; (5) rdata is wire bytes, with a 0-2 byte
// length instead of a fixed 2-byte prefix. The key lives in the same bytes, so the index
// holds no key copy, and there is no per-entry allocation or pointer: the index slot's
// 32-bit offset is the only reference.
#pragma once
#include <cstddef>
#include <cstdint>

#include "../wire/constants.hpp"  // RDIMP's types: wire::kTypeA, wire::kTypeAaaa

namespace dnsarena::cache {

inline constexpr std::size_t kEntryHeaderBytes = 12;
inline constexpr std::size_t kEntryLenOffset = 0;
inline constexpr std::size_t kEntryInfoOffset = 2;
inline constexpr std::size_t kEntryExpireOffset = 4;
inline constexpr std::size_t kEntryTtlOffset = 8;
inline constexpr std::size_t kEntryKeyOffset = 12;
inline constexpr std::size_t kMaxEntryBytes = 65535;

inline constexpr std::uint8_t kInfoRcodeMask = 0x0F;
inline constexpr std::uint8_t kInfoWideCounts = 1u << 4;
inline constexpr std::uint8_t kInfoAuthenticData = 1u << 5;
inline constexpr unsigned kInfoVerdictShift = 6;
inline constexpr std::uint8_t kInfoVerdictMask = 0xC0;

// What a validating worker concluded about an entry (workers/validation_jobs.hpp). The
// hooks for aggressive NSEC (RFC 8198) read it: only a secure negative entry's NSEC /
// NSEC3 sets may answer for other names.
enum class EntryVerdict : std::uint8_t { unvalidated = 0, secure = 1, insecure = 2, indeterminate = 3 };

inline constexpr std::uint8_t kDescOwnerIsQname = 1u << 0;
inline constexpr std::uint8_t kDescTypeIsQtype = 1u << 1;
inline constexpr std::uint8_t kDescTtlIsEntryTtl = 1u << 2;
inline constexpr std::uint8_t kDescClassIn = 1u << 3;
inline constexpr std::uint8_t kDescRdlenImplied = 1u << 4;
inline constexpr std::uint8_t kDescRdlenU8 = 1u << 5;
inline constexpr std::uint8_t kDescReservedMask = 0xC0;

inline constexpr std::size_t padded_entry_size(std::size_t len) { return (len + 7) & ~std::size_t{7}; }

static_assert(kEntryKeyOffset == kEntryHeaderBytes, "the key blob follows the fixed header");
static_assert(kEntryExpireOffset % 4 == 0 && kEntryTtlOffset % 4 == 0, "u32 fields stay 4-byte aligned");

}  // namespace dnsarena::cache

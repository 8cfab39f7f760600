// SPDX-License-Identifier: GPL-3.0-or-later
// The compiled response policy: one read-only, position-independent image (no pointers,
// only offsets from its first byte), made once by policy_compiler.hpp and mapped by every
// worker (sealed_image.hpp). Every place that depends on the layout below is tagged
// POLICY-FORMAT.
//
// Image (all integers little-endian, native on the only platform built):
//
//   offset        size            field
//   0             128             ImageHeader
//   128           8 x slot_count  Slot table: open addressing, linear probing,
//                                 slot_count a power of two, load <= 1/2 ... 3/4
//   filter_off    8 x filter_words  Filter: per trigger two bits in one u64 word
//                                 (name_hash.hpp: filter_word, filter_bits); a name
//                                 whose word lacks either bit has no rule, and its slot
//                                 is not read. 8..16 bits per trigger: ~3..5% pass falsely
//   records_off   ...             RuleRecord, one per trigger, 4-byte aligned
//   zones_off     4 x zone_count  ZoneInfo offsets (from byte 0), one per policy zone
//   ...           ...             ZoneInfo, one per policy zone, 4-byte aligned
//
// ImageHeader (128 bytes):
//
//   offset size field            meaning
//   0      8    magic            "DNSAPOL\0" (kImageMagic)
//   8      4    format_version   kImageFormatVersion; a reader refuses any other
//   12     4    header_bytes     128
//   16     8    image_bytes      the whole image; a mapping shorter than this is refused
//   24     4    slot_count       power of two
//   28     4    rule_count       triggers (records)
//   32     8    exact_labels     bit n: some exact trigger has n labels (n >= 63: bit 63)
//   40     8    wildcard_labels  bit n: some `*.` trigger's parent has n labels (root: bit 0)
//   48     4    slots_offset     128
//   52     4    records_offset   128 + 8 x slot_count + 8 x filter_words
//   56     4    zone_count       policy zones compiled, in order (config first, then rpz files)
//   60     4    filter_words     power of two; the filter starts at 128 + 8 x slot_count
//   64     4    zones_offset     the ZoneInfo offset table
//   68     4    reserved         zero
//   72     24   response_ip_lens bit n (of 192): some rpz-ip trigger has prefix length n (of
//                                the 128-bit key below)
//   96     24   client_ip_lens   the same for rpz-client-ip triggers
//   120    8    reserved         zero
//
// Slot (8 bytes, one u64): |-- record offset / 4 (32) --|-- tag (32) --|
//   tag: the high half of the trigger's hash, never 0 (0 = empty slot).
//
// RuleRecord (4-byte aligned, 8 + name_len + data_len bytes, then padding to 4):
//
//   offset     size      field
//   0          1         name_len    trigger name in lowercase wire form (without `*.`)
//   1          1         flags       |-- unused (2) --|-- kind (2) --|-- action (3) --|-- wildcard (1) --|
//                                    kind: TriggerKind (qname, response_ip, client_ip)
//   2          1         zone        policy zone index (0 first; the first zone that matches wins)
//   3          1         reserved    zero
//   4          2         rr_count    local data records (action local_data)
//   6          2         data_len    bytes of the records below
//   8          name_len  name (qname triggers); an address trigger's key (17 bytes): the
//                        prefix length, then the 16-byte address with the bits past it
//                        zero, IPv4 as ::ffff:a.b.c.d/96+n
//   8+name_len data_len  records, each: u16 type | u16 rdlength | u32 ttl | rdata
//
// ZoneInfo (4-byte aligned, 8 + origin_len + soa_len bytes): what a policy answer says
// about the zone whose rule decided it.
//
//   offset      size        field
//   0           1           origin_len  the zone's origin, lowercase wire form (0: none, the
//                                       config's local zone)
//   1           1           flags       bit 0: the zone has an SOA (its apex record)
//   2           2           soa_len     SOA rdata bytes (names uncompressed)
//   4           4           soa_ttl     the SOA record's TTL
//   8           origin_len  origin
//   8+origin    soa_len     SOA rdata
//
// The hash of a name is computed over its labels from the root leftwards (name_hash.hpp),
// so one pass over a query name yields the hash of every suffix: the exact trigger and
// every `*.` parent cost one filter word each (1 to 2 bytes per trigger: in cache where the
// slot table is not), and a slot probe only when the filter passes; the label masks
// above skip the label counts no trigger has.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dnsarena::policy {

inline constexpr std::uint64_t kImageMagic = 0x004C4F5041534E44ull;  // "DNSAPOL\0" little-endian
inline constexpr std::uint32_t kImageFormatVersion = 2;

// What a rule's trigger is (RPZ section 4): a name, an address in an answer (rpz-ip), or
// the client's address (rpz-client-ip).
enum class TriggerKind : std::uint8_t { qname = 0, response_ip = 1, client_ip = 2 };

// What a rule does (RPZ actions; local_zone types map onto them, local_zone.hpp).
enum class Action : std::uint8_t {
  nxdomain = 1,    // RPZ `CNAME .`: NXDOMAIN
  nodata = 2,      // RPZ `CNAME *.`: NOERROR, no answer
  passthru = 3,    // RPZ `CNAME rpz-passthru.`: answered as without policy
  drop = 4,        // RPZ `CNAME rpz-drop.`: no answer at all
  local_data = 5,  // the record's RRsets answer (CNAME answers every type)
  refuse = 6,      // local_zone refuse: REFUSED
};

// POLICY-FORMAT
struct ImageHeader {
  std::uint64_t magic;
  std::uint32_t format_version;
  std::uint32_t header_bytes;
  std::uint64_t image_bytes;
  std::uint32_t slot_count;
  std::uint32_t rule_count;
  std::uint64_t exact_labels;
  std::uint64_t wildcard_labels;
  std::uint32_t slots_offset;
  std::uint32_t records_offset;
  std::uint32_t zone_count;
  std::uint32_t filter_words;
  std::uint32_t zones_offset;
  std::uint32_t reserved0;
  std::uint64_t response_ip_lens[3];
  std::uint64_t client_ip_lens[3];
  std::uint64_t reserved1;
};
static_assert(sizeof(ImageHeader) == 128, "the header is two cache lines: the slot table starts at 128");
static_assert(offsetof(ImageHeader, image_bytes) == 16, "documented offset");
static_assert(offsetof(ImageHeader, slot_count) == 24, "documented offset");
static_assert(offsetof(ImageHeader, exact_labels) == 32, "documented offset");
static_assert(offsetof(ImageHeader, wildcard_labels) == 40, "documented offset");
static_assert(offsetof(ImageHeader, slots_offset) == 48, "documented offset");
static_assert(offsetof(ImageHeader, zone_count) == 56, "documented offset");
static_assert(offsetof(ImageHeader, filter_words) == 60, "documented offset");
static_assert(offsetof(ImageHeader, zones_offset) == 64, "documented offset");
static_assert(offsetof(ImageHeader, response_ip_lens) == 72, "documented offset");
static_assert(offsetof(ImageHeader, client_ip_lens) == 96, "documented offset");

// POLICY-FORMAT
struct ZoneInfoHead {
  std::uint8_t origin_len;
  std::uint8_t flags;
  std::uint16_t soa_len;
  std::uint32_t soa_ttl;
};
static_assert(sizeof(ZoneInfoHead) == 8, "the origin starts at byte 8 of a ZoneInfo");
inline constexpr std::uint8_t kZoneHasSoa = 1;

// POLICY-FORMAT
struct RuleRecordHead {
  std::uint8_t name_len;
  std::uint8_t flags;
  std::uint8_t zone;
  std::uint8_t reserved;
  std::uint16_t rr_count;
  std::uint16_t data_len;
};
static_assert(sizeof(RuleRecordHead) == 8, "the name starts at byte 8 of a record");
static_assert(offsetof(RuleRecordHead, rr_count) == 4, "documented offset");
static_assert(offsetof(RuleRecordHead, data_len) == 6, "documented offset");

inline constexpr std::uint8_t kFlagWildcard = 1;
inline constexpr unsigned kActionShift = 1;
inline constexpr std::uint8_t kActionMask = 0x7;
inline constexpr unsigned kKindShift = 4;
inline constexpr std::uint8_t kKindMask = 0x3;
inline constexpr std::size_t kAddressKeyBytes = 17;  // prefix length, 16-byte address
inline constexpr std::size_t kRecordAlign = 4;  // slot offsets count 4-byte units
inline constexpr std::size_t kRrHeadBytes = 8;  // type, rdlength, ttl
inline constexpr std::size_t kMaxZones = 255;   // zone index is a byte
inline constexpr unsigned kLabelBitCap = 63;    // label counts >= 63 share bit 63

inline constexpr std::uint64_t label_bit(unsigned labels) {
  return std::uint64_t{1} << (labels < kLabelBitCap ? labels : kLabelBitCap);
}
inline constexpr std::uint64_t slot_of(std::uint32_t record_units, std::uint32_t tag) {
  return (std::uint64_t{record_units} << 32) | tag;
}

}  // namespace dnsarena::policy

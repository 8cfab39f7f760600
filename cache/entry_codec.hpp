// SPDX-License-Identifier: GPL-3.0-or-later
// Encoding answers into the entry format (entry_format.hpp) and reading them back.
//
// Encode cost: one pass over the records into a caller-owned scratch buffer (reused across
// inserts, as the seed's change 5), then one copy into the arena. Decode is a bounds-checked
// forward walk: every length is checked against the entry end, so a damaged or foreign run
// of bytes is reported as invalid, never read past.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "cache_key.hpp"
#include "entry_format.hpp"

namespace dnsarena::cache {

// One resource record as given to the cache. Names are uncompressed wire form.
struct RecordData {
  std::span<const std::uint8_t> owner;  // empty = the query name
  std::uint16_t type = 0;
  std::uint16_t rclass = 1;
  std::uint32_t ttl = 0;
  std::span<const std::uint8_t> rdata;
};

enum Section : unsigned { kAnswer = 0, kAuthority = 1, kAdditional = 2 };

// A DNS answer to cache: positive, NODATA (no answer records, SOA in authority) or
// NXDOMAIN (rcode 3). `ttl` is the entry's lifetime; 0 means "the smallest record TTL".
struct Answer {
  std::uint8_t rcode = 0;
  bool authentic_data = false;
  EntryVerdict verdict = EntryVerdict::unvalidated;  // a validating worker's (entry_format.hpp)
  std::uint32_t ttl = 0;
  std::span<const RecordData> sections[3];
};

// Encodes `answer` for `key` into `out` (cleared first), padded to 8 bytes.
// Returns the unpadded length, or 0 if it cannot be represented (entry over 65535 bytes,
// invalid owner name, rdata over 65535 bytes).
std::size_t encode_entry(const CacheKey& key, const Answer& answer, std::uint32_t now,
                         std::vector<std::uint8_t>& out);
// The same bytes into buf[0, *padded_size): `buf` is only grown (never shrunk or
// cleared), so a reused buffer costs no zero-filling. Returns the unpadded length, 0
// (and *padded_size 0) when it cannot be represented.
std::size_t encode_entry_into(const CacheKey& key, const Answer& answer, std::uint32_t now,
                              std::vector<std::uint8_t>& buf, std::size_t* padded_size);

// A decoded record: spans point into the entry bytes the reader was built on.
struct RecordView {
  bool owner_is_qname = true;
  std::span<const std::uint8_t> owner;  // the stored owner; the qname when owner_is_qname
  std::uint16_t type = 0;
  std::uint16_t rclass = 1;
  std::uint32_t ttl = 0;  // as inserted
  std::span<const std::uint8_t> rdata;
};

class EntryReader {
public:
  // Parses the fixed part. valid() is false for a malformed entry.
  explicit EntryReader(std::span<const std::uint8_t> entry);
  // For an entry whose key blob was just compared byte for byte with a validated key of
  // `key_length` bytes: skips re-validating the name.
  EntryReader(std::span<const std::uint8_t> entry, std::size_t key_length);
  bool valid() const { return valid_; }

  std::size_t length() const { return len_; }
  std::uint8_t rcode() const { return info_ & kInfoRcodeMask; }
  bool authentic_data() const { return (info_ & kInfoAuthenticData) != 0; }
  EntryVerdict verdict() const { return static_cast<EntryVerdict>(info_ >> kInfoVerdictShift); }
  std::uint32_t expire() const { return expire_; }
  std::uint32_t ttl() const { return ttl_; }
  std::uint32_t inserted() const { return expire_ - ttl_; }
  std::span<const std::uint8_t> key_blob() const { return key_; }
  std::span<const std::uint8_t> qname() const { return qname_; }
  std::uint16_t qtype() const { return static_cast<std::uint16_t>(key_[0] | (key_[1] << 8)); }
  std::uint16_t count(Section s) const { return counts_[s]; }
  std::uint32_t record_count() const { return std::uint32_t{counts_[0]} + counts_[1] + counts_[2]; }

  // Walks records in order (answer, authority, additional). Returns false at the end, or
  // when a record is malformed (then records_valid() turns false).
  bool next(RecordView& rec);
  bool records_valid() const { return records_valid_; }
  void rewind() { pos_ = records_start_; records_valid_ = valid_; }
  // Walks all records; true when they parse and end exactly at entry_len.
  bool validate_all();

private:
  void parse(std::span<const std::uint8_t> entry, std::size_t key_length);
  std::span<const std::uint8_t> bytes_;
  std::span<const std::uint8_t> key_;
  std::span<const std::uint8_t> qname_;
  std::size_t len_ = 0;
  std::size_t pos_ = 0;
  std::size_t records_start_ = 0;
  std::uint32_t expire_ = 0, ttl_ = 0;
  std::uint16_t counts_[3] = {0, 0, 0};
  std::uint8_t info_ = 0;
  bool valid_ = false;
  bool records_valid_ = false;
};

}  // namespace dnsarena::cache

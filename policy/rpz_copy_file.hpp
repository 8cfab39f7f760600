// SPDX-License-Identifier: GPL-3.0-or-later
// The binary file a zone transfer keeps of an RPZ (workers/rpz_zone_copy.hpp writes it,
// read_rpz_file reads it): the zone's records in wire form, so the supervisor compiles
// the policy without printing and parsing zone file text (libzscanner took 0.66 s of CPU
// and the printing 0.5 s for 1,000,000 rules; docs/benchmarking.md, RPZ by zone transfer).
// `dnsarena policy export FILE` prints one as a zone file for operators.
//
// Layout, every integer little-endian [RPZ-COPY-FORMAT]:
//
//   offset  size  field
//        0     8  magic "DNSARPZC"
//        8     4  format version (kRpzCopyVersion)
//       12     4  header bytes (48): where the body starts
//       16     8  records in the body (the apex SOA included)
//       24     8  body bytes: the file is exactly header + body bytes long
//       32     8  checksum of the body (rpz_copy_checksum)
//       40     4  origin bytes: the body starts with the zone's origin (lowercase wire)
//       44     4  0
//       48        body: the origin, then per record
//                   owner length (1), owner (lowercase wire, absolute),
//                   type (2), TTL (4), rdata length (2), rdata (wire, names uncompressed)
//                 the apex SOA first.
//
// Reading checks all of it before the first record is handed out: a file that is not a
// copy (magic), of another format version, of another zone, cut short, grown, or changed
// (checksum) is a PolicyError naming the file and what is wrong, never a partial zone.
// The checksum finds damage, not forgery: whoever can write the file sets the policy.
// Costs: 9 bytes per record beside its owner and rdata (39 bytes per `CNAME .` rule of
// bench/rpz_xfr.sh's names: owners are kept whole, the origin in each); writing is one
// pass, reading two (the checks, then the records).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/rule_set.hpp"
#include "policy/zone_scanner.hpp"

namespace dnsarena::policy {

inline constexpr std::string_view kRpzCopyMagic{"DNSARPZC", 8};
// Bump when the layout above changes; a reader refuses every other version.
inline constexpr std::uint32_t kRpzCopyVersion = 1;
inline constexpr std::size_t kRpzCopyHeaderBytes = 48;

// The little-endian integers of the copy's and the delta's headers.
template <typename T>
void rpz_put_le(std::uint8_t* p, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <typename T>
T rpz_get_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return static_cast<T>(v);
}

// The whole of a regular file. Throws PolicyError "PATH: what".
std::vector<std::uint8_t> read_rpz_bytes(const std::string& path);

// 64-bit checksum of `n` bytes (8 bytes a step, multiply and rotate).
std::uint64_t rpz_copy_checksum(const std::uint8_t* p, std::size_t n);

// Builds a copy in memory: add() the records (the apex SOA first), then finish().
class RpzCopyWriter {
public:
  // REQUIRES: `origin` lowercase wire form.
  RpzCopyWriter(const WireName& origin, std::size_t records_hint);
  // Throws PolicyError when the owner is over 255 or the rdata over 65535 bytes.
  void add(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type, std::uint32_t ttl,
           const std::uint8_t* rdata, std::size_t rdata_len);
  // The whole file, header filled in. The writer is spent.
  std::vector<std::uint8_t> finish();
  // The body's checksum finish() wrote.
  std::uint64_t checksum() const { return checksum_; }

private:
  std::vector<std::uint8_t> bytes_;
  std::uint64_t records_ = 0;
  std::uint64_t checksum_ = 0;
};

// A copy read and checked whole (see the header comment), its records handed out in order.
class RpzCopyReader {
public:
  // True when `path` starts with the magic (a copy, perhaps a damaged one); false for a
  // zone file, a shorter file, or none.
  static bool is_copy(const std::string& path);
  // Throws PolicyError "PATH: what" when the file cannot be read or fails a check.
  explicit RpzCopyReader(const std::string& path);
  // The same over bytes; `source` names them in errors.
  RpzCopyReader(std::vector<std::uint8_t> bytes, std::string source);

  const WireName& origin() const { return origin_; }
  std::uint64_t records() const { return records_; }
  // The body's checksum (the header's, verified): what names this copy to a delta
  // (rpz_copy_delta.hpp).
  std::uint64_t checksum() const { return checksum_; }
  const std::string& source() const { return source_; }
  // The next record (r.line: its number, from 1); false after the last.
  bool next(ScannedRecord& r);
  // Throws PolicyError "SOURCE:record N: what" (ZoneScanner's form).
  [[noreturn]] void fail(unsigned record, const std::string& what) const;

private:
  void check();
  std::vector<std::uint8_t> bytes_;
  std::string source_;
  WireName origin_;
  std::uint64_t records_ = 0;
  std::uint64_t checksum_ = 0;
  std::uint64_t read_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
// The delta file beside a transferred RPZ's copy (rpz_copy_file.hpp): what one IXFR
// changed, so that the policy is compiled from the old copy and the change before the
// copy itself is rewritten (workers/rpz_transfer_process.hpp: the rewrite of a
// 1,000,000-record copy took 0.2 to 0.55 s of wall time on the way from NOTIFY to the
// new policy; the delta of a one-rule IXFR is a few hundred bytes).
//
// Which copy it applies to: the delta names its base by the base's body checksum (the
// copy header's). read_rpz_file applies a delta only to that copy; to any other (the
// rewritten copy that already holds the change, an older one, a text zone file) it is
// stale and ignored. So the files on disk are consistent at every instant of a writer
// that (1) writes the delta, (2) tells the compiler, (3) rewrites the copy, each file
// replaced by rename: a crash before (3) leaves the old copy and its delta (the policy
// the compiler made, whose serial the next IXFR starts below: the copy's), a crash after
// it the new copy and a stale delta. A reader opens the delta before the copy: a copy
// rewritten between the two opens holds the change already.
//
// Layout, every integer little-endian [RPZ-DELTA-FORMAT]:
//
//   offset  size  field
//        0     8  magic "DNSARPZD"
//        8     4  format version (kRpzDeltaVersion)
//       12     4  header bytes (48): where the removed records start
//       16     8  the base copy's body checksum
//       24     8  removed: bytes of the removed records' copy
//       32     8  added: bytes of the added records' copy
//       40     8  rpz_copy_checksum of bytes 0..39
//       48        the removed records, an RPZ copy (rpz_copy_file.hpp) of the zone
//   48+removed    the added records, an RPZ copy, the new apex SOA first
//
// The two embedded copies carry their own checksums and are checked whole by
// RpzCopyReader; the file is exactly 48 + removed + added bytes. A record's identity is
// (owner, type, rdata), its TTL apart (RFC 1995): a TTL change is a removal and an
// addition.
// Costs: the same bytes per record as a copy; reading one builds a hash set of the
// removed records, and the patched reading of the base looks up every base record in
// it (skipped when nothing is removed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/rpz_copy_file.hpp"
#include "policy/rule_set.hpp"
#include "policy/zone_scanner.hpp"

namespace dnsarena::policy {

inline constexpr std::string_view kRpzDeltaMagic{"DNSARPZD", 8};
// Bump when the layout above changes; a reader refuses every other version.
inline constexpr std::uint32_t kRpzDeltaVersion = 1;
inline constexpr std::size_t kRpzDeltaHeaderBytes = 48;

// Where the delta of the copy at `copy_file` lives.
std::string rpz_delta_path(const std::string& copy_file);

// Builds a delta in memory: remove() and add() in any order, then finish().
class RpzDeltaWriter {
public:
  // REQUIRES: `origin` lowercase wire form; `soa_rdata` the new apex SOA's.
  RpzDeltaWriter(const WireName& origin, std::uint64_t base_checksum, std::uint32_t soa_ttl, const WireName& soa_rdata);
  void remove(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type, const std::uint8_t* rdata,
              std::size_t rdata_len);
  void add(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type, std::uint32_t ttl,
           const std::uint8_t* rdata, std::size_t rdata_len);
  // The whole file. The writer is spent.
  std::vector<std::uint8_t> finish();

private:
  std::uint64_t base_checksum_;
  RpzCopyWriter removed_, added_;
};

// A delta read and checked whole. Throws PolicyError "PATH: what" (like RpzCopyReader).
class RpzCopyDelta {
public:
  explicit RpzCopyDelta(const std::string& path);
  RpzCopyDelta(std::vector<std::uint8_t> bytes, std::string source);

  std::uint64_t base_checksum() const { return base_checksum_; }
  const WireName& origin() const { return added_.origin(); }
  RpzCopyReader& removed() { return removed_; }
  const ScannedRecord& soa() const { return soa_; }  // the new apex SOA
  RpzCopyReader& added() { return added_; }          // the records after it

private:
  static std::vector<std::uint8_t> slice(const std::vector<std::uint8_t>& bytes, const std::string& source, bool added);
  std::uint64_t base_checksum_;
  RpzCopyReader removed_, added_;
  ScannedRecord soa_;
};

// The records of `base` with `delta` applied, for the RPZ reader (next(), fail(),
// source(), as RpzCopyReader): the delta's SOA, the base's records but its apex SOA and
// the removed ones, then the added ones.
// REQUIRES: delta.base_checksum() == base.checksum(). Throws PolicyError when a removed
// record is not in the base (a delta made against another copy).
class RpzPatchedCopy {
public:
  RpzPatchedCopy(RpzCopyReader& base, RpzCopyDelta& delta);
  bool next(ScannedRecord& r);
  [[noreturn]] void fail(unsigned record, const std::string& what) const;
  const std::string& source() const { return source_; }

private:
  bool skip(const ScannedRecord& r);
  RpzCopyReader& base_;
  RpzCopyDelta& delta_;
  std::string source_;
  // (owner, type, rdata) -> how many base records it removes
  std::unordered_map<std::string, unsigned> removed_;
  std::size_t unmatched_ = 0;
  std::string key_;  // reused per base record
  int phase_ = 0;    // 0: the SOA, 1: the base, 2: the added records
  unsigned line_ = 0;
};

}  // namespace dnsarena::policy

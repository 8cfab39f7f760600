// SPDX-License-Identifier: GPL-3.0-or-later
// The RPZ transfer process's copy of one transferred zone: what IXFR deltas apply to,
// and what is written to the zone's `file` for the policy compiler to read.
//
// Layout: one hash map from (owner, type, rdata) to TTL, the apex SOA apart. An IXFR
// delta removes and adds records by (owner, type, rdata), TTL ignored (RFC 1995); a
// removal of a record the copy does not hold means the copy and the primary disagree:
// apply() undoes what it did and throws, and the caller asks for the whole zone (AXFR).
// The file is written as a binary copy (policy/rpz_copy_file.hpp: records in wire form,
// SOA first, with a checksum; `dnsarena policy export` prints it as a zone file) to a
// temporary in the same directory, fsynced and renamed over the old one: a crash leaves
// the old file or the new one, never half of one. load() reads such a copy, or a zone
// file (the text copies older builds wrote, or a zone an operator put there).
// write_delta() writes what the last apply() changed (policy/rpz_copy_delta.hpp) beside
// the file, named by the file's checksum: the policy compiler reads the file and the
// delta as the new zone, so the transfer process tells the supervisor before it rewrites
// the file (rpz_transfer_process.hpp).
// Costs: about 100 B per record of memory beside the names and data; write() copies
// every record (a full rewrite, also for a one-record IXFR: 30 MB and about 0.1 s of
// CPU at 1,000,000 rules, against 0.5 s to print the same as text); write_delta() only
// the changed ones.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "workers/zone_transfer.hpp"

namespace dnsarena::workers {

class RpzZoneCopy {
public:
  explicit RpzZoneCopy(XfrBytes origin) : origin_(std::move(origin)) {}

  // Reads the zone from `file` (a copy write() made, or any zone file of the zone). False
  // with `error` set when it cannot be read (missing: error empty); the copy is then empty.
  bool load(const std::string& file, std::string& error);
  // The whole zone of an AXFR (REQUIRES: kind axfr).
  void replace(TransferResult& axfr);
  // The deltas of an IXFR in order, then `soa`. Throws TransferError (copy unchanged)
  // when a delta does not start at the copy's serial or removes a record it lacks.
  void apply(const std::vector<IxfrDelta>& deltas, const ZoneRecord& soa);
  // Throws std::runtime_error (errno's text) when the file cannot be written.
  void write(const std::string& file);
  // True when write_delta() can write: the last apply() changed the copy that load() or
  // write() left in the file, a binary copy (not a zone file).
  bool has_delta() const { return has_change_; }
  // Writes the last apply()'s change to rpz_delta_path(file), atomically (renamed into
  // place) but not fsynced. REQUIRES: has_delta(). Throws std::runtime_error when it
  // cannot be written.
  void write_delta(const std::string& file) const;

  bool has() const { return has_; }
  std::uint32_t serial() const;
  const ZoneRecord& soa() const { return soa_; }
  std::size_t size() const { return records_.size() + (has_ ? 1 : 0); }

private:
  // owner, type (2 bytes), rdata
  static std::string key_of(const ZoneRecord& r);
  struct KeyParts {
    const std::uint8_t* owner;
    std::size_t owner_len;
    std::uint16_t type;
    const std::uint8_t* rdata;
    std::size_t rdata_len;
  };
  static KeyParts parts_of(const std::string& key);
  static void replace_file(const std::string& file, const std::vector<std::uint8_t>& bytes, bool durable);
  // Reads a binary copy into the (empty) copy. Throws policy::PolicyError.
  void load_copy(const std::string& file);
  XfrBytes origin_;
  // The body checksum of the binary copy in the file (load() read it, write() wrote it);
  // 0: none, or a zone file.
  std::uint64_t file_checksum_ = 0;
  // What the last apply() changed against the file (has_change_): the keys removed, and
  // those added (with their TTL in records_). A TTL change is both.
  bool has_change_ = false;
  bool dirty_ = false;  // the records differ from the file's (apply() or replace() since load() or write())
  std::vector<std::string> removed_, added_;
  bool has_ = false;
  ZoneRecord soa_;
  std::unordered_map<std::string, std::uint32_t> records_;  // key_of -> TTL
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// One refresh of the local root copy (recursion.local_root_from, RFC 8806 section 2):
// what the process local_root_updater.hpp forks does, and nothing of when.
//
//   due?       the file's SOA (the first SOA at "." in it) and modification time: a copy
//              whose refresh interval has not passed since the file was written or last
//              refreshed is left alone (not_due), unless `force`. A missing file, or one
//              whose SOA cannot be read, is due at once.
//   ask        the primaries in order, the next one on any failure: the SOA of "." over
//              UDP (one attempt of 2 s; TCP on TC), which must be an authoritative
//              NOERROR answer.
//   unchanged  the primary's serial is not newer than the file's (RFC 1982): the file's
//              modification time is set to now (unchanged), so the copy's age, from which
//              LocalRoot counts the SOA expire, runs from this successful refresh.
//   newer      AXFR of "." (zone_transfer.hpp, kLocalRootLimits: records, bytes and
//              time of the whole transfer bounded), printed as a master-format file
//              beside `file` (`file`.axfr, one record a line through libknot's printer),
//              fsynced, checked with LocalRoot::load (parses, one SOA and an NS set at
//              ".": a zone that is not a root zone is refused; its ZONEMD as
//              `zonemd` and `anchors` ask, local_root_zonemd.hpp), then renamed over
//              `file` and the directory fsynced (installed).
//              A serial not newer than the file's after all, or a copy that fails the
//              check: the temporary goes, the file stays, the next primary is asked.
//   failed     no primary gave a newer copy or confirmed the current one: nothing changed.
// The next refresh (next_unix_s): the SOA's refresh after a success (the copy's, or the
// new one's), its retry after a failure (the file's SOA; without one the least interval),
// each bounded to min_interval_s .. kMaxIntervalS.
// Costs: the transfer's records in memory (about 60 B each beside names and data: a few
// MB for the root zone's ~22,000), its text once more, and one load of the copy.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dnssec/trust_anchors.hpp"
#include "workers/local_root_zonemd.hpp"
#include "workers/rpz_transfer_config.hpp"  // XfrAddress
#include "workers/zone_transfer.hpp"

namespace dnsarena::workers {

// A lying primary's bound: the root zone has about 22,000 records in 2-3 MB.
inline constexpr TransferLimits kLocalRootLimits{.max_records = 200'000, .max_bytes = 32ull << 20, .timeout_ms = 60'000};

struct LocalRootRefreshSettings {
  std::string file;                  // recursion.local_root
  std::vector<XfrAddress> primaries; // recursion.local_root_from
  unsigned min_interval_s = 60;      // recursion.local_root_refresh_min_s
  ZonemdCheck zonemd = ZonemdCheck::verify;              // recursion.local_root_zonemd
  std::shared_ptr<const dnssec::TrustAnchors> anchors;  // dnssec's: the ZONEMD's RRSIG (may be null)
  TransferLimits limits = kLocalRootLimits;
  static constexpr unsigned kMaxIntervalS = 86'400;
};

enum class LocalRootOutcome { not_due, unchanged, installed, failed };
const char* to_string(LocalRootOutcome o);

struct LocalRootRefreshReport {
  LocalRootOutcome outcome = LocalRootOutcome::failed;
  bool has_copy = false;       // the file holds a copy (after the refresh)
  std::uint32_t serial = 0;    // the file's serial (after the refresh)
  std::uint32_t expire_s = 0;  // its SOA expire
  std::uint64_t records = 0;   // installed: the new copy's records
  std::string primary;         // who answered (unchanged, installed)
  std::string error;           // failed: every primary's reason, "; "-separated
  std::int64_t next_unix_s = 0;
};

// One refresh at Unix time `now_s` (see the header comment). Never throws: a primary's
// failure, and a temporary that cannot be written or renamed, are a failed outcome whose
// error says which.
LocalRootRefreshReport refresh_local_root(const LocalRootRefreshSettings& s, std::int64_t now_s, bool force = false);

}  // namespace dnsarena::workers

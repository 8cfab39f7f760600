// SPDX-License-Identifier: GPL-3.0-or-later
// What the supervisor knows of the local root copy kept by zone transfer
// (recursion.local_root_from, local_root_updater.hpp), for `dnsarena stats`: it writes
// /dev/shm/.<segment>.local_root.json (snapshot_file.hpp: written whole) at start and
// after every refresh.
//
//   {"supervisor_pid": P, "written_unix_ms": T,
//    "local_root": {"file": "/var/lib/dnsarena/root.zone", "primaries": ["192.0.2.1@53"],
//                   "has_copy": true, "serial": 2026120700, "records": 22000 (0: not known
//                   yet: the copy was not transferred by this run),
//                   "last_outcome": "unchanged" | "installed" | "failed" | "not due",
//                   "last_primary": "192.0.2.1@53", "last_attempt_unix_ms": T,
//                   "last_success_unix_ms": T (a primary confirmed or replaced the copy),
//                   "last_transfer_unix_ms": T, "last_error": "" (or why the last attempt
//                   failed), "transfers": 1, "unchanged": 5, "failures": 0,
//                   "next_refresh_unix_ms": T}}
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workers/local_root_refresh.hpp"

namespace dnsarena::workers {

struct LocalRootStatus {
  std::string file;
  std::vector<std::string> primaries;
  bool has_copy = false;
  std::uint32_t serial = 0;
  std::uint64_t records = 0;
  std::string last_outcome, last_primary, last_error;
  std::uint64_t last_attempt_unix_ms = 0, last_success_unix_ms = 0, last_transfer_unix_ms = 0;
  std::uint64_t transfers = 0, unchanged = 0, failures = 0;
  std::uint64_t next_refresh_unix_ms = 0;

  // Takes one refresh's report made at `now_unix_ms` (counts it, keeps its error).
  void record(const LocalRootRefreshReport& r, std::uint64_t now_unix_ms);
};

// A refresh's report as the refresh process sends it to the supervisor, and back.
nlohmann::json report_json(const LocalRootRefreshReport& r);
// Throws (nlohmann::json::exception, std::runtime_error) when a field is missing or bad.
LocalRootRefreshReport report_from_json(const nlohmann::json& j);

bool write_local_root_snapshot(const std::string& segment, const LocalRootStatus& s);
void remove_local_root_snapshot(const std::string& segment);
std::optional<nlohmann::json> read_local_root_snapshot(const std::string& segment);
// `dnsarena stats`: two lines.
std::string local_root_status_text(const nlohmann::json& snapshot);

}  // namespace dnsarena::workers

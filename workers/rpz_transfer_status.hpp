// SPDX-License-Identifier: GPL-3.0-or-later
// What the RPZ transfer process (rpz_transfer_process.hpp) reports of each zone, for
// `dnsarena stats` and /metrics: it writes /dev/shm/.<segment>.rpz.json
// (snapshot_file.hpp: written whole) after every transfer attempt and NOTIFY.
//
//   {"supervisor_pid": P (the transfer process), "written_unix_ms": T,
//    "notifies_over_rate": 0,
//    "rpz_zones": [{"zone": "rpz.example.", "primary": "192.0.2.1@53", "has_copy": true,
//                   "serial": 7, "records": 12, "last_kind": "IXFR",
//                   "last_transfer_unix_ms": T, "last_attempt_unix_ms": T,
//                   "last_error": "" (or why the last attempt failed),
//                   "transfers_ok": 3, "transfers_failed": 0, "fallbacks_to_axfr": 0,
//                   "notifies_accepted": 2, "notifies_refused": 0}]}
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dnsarena::workers {

struct RpzZoneStatus {
  std::string zone, primary;
  bool has_copy = false;
  std::uint32_t serial = 0;
  std::uint64_t records = 0;
  std::string last_kind;  // "AXFR", "IXFR" (of the last transfer that changed the copy)
  std::uint64_t last_transfer_unix_ms = 0, last_attempt_unix_ms = 0;
  std::string last_error;
  std::uint64_t transfers_ok = 0, transfers_failed = 0, fallbacks_to_axfr = 0;
  std::uint64_t notifies_accepted = 0, notifies_refused = 0;
};

std::string rpz_snapshot_path(const std::string& segment);
bool write_rpz_snapshot(const std::string& segment, const std::vector<RpzZoneStatus>& zones,
                        std::uint64_t notifies_over_rate);
void remove_rpz_snapshot(const std::string& segment);
std::optional<nlohmann::json> read_rpz_snapshot(const std::string& segment);

// `dnsarena stats`: one line per zone.
std::string rpz_status_text(const nlohmann::json& snapshot);
// /metrics: dnsarena_rpz_serial{zone}, dnsarena_rpz_records{zone},
// dnsarena_rpz_last_transfer_timestamp_seconds{zone,kind}, dnsarena_rpz_last_attempt_failed{zone}
// (1 when the last attempt failed), dnsarena_rpz_transfers_total{zone,result="ok"|"failed"}.
std::string rpz_prometheus_text(const nlohmann::json& snapshot);

}  // namespace dnsarena::workers

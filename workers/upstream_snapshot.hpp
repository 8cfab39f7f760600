// SPDX-License-Identifier: GPL-3.0-or-later
// The upstream health table (upstream_health.hpp) as `dnsarena stats` sees it.
//
// The table is an anonymous mapping of the serve's processes: no other process can map
// it, and it is not in the segment (whose format it would change). So the supervisor
// publishes it: once a second it writes a small JSON file next to the segment,
// /dev/shm/.<segment>.upstreams.json (a dot file, so nothing that lists the segment's
// own files sees it), to a temporary and renamed over the old one, so a reader never
// sees half of one. A clean stop removes it; a killed supervisor leaves one that says
// whose it was and when it was written (stats reports its age and whether that pid still
// runs). /metrics needs none of this: it runs in the supervisor and reads the table.
//
//   {"supervisor_pid": 1234, "written_unix_ms": 1733200000000,
//    "upstreams": [{"upstream": "192.0.2.1:53", "state": "up" | "down",
//                   "srtt_ms": 0.8 | null, "rttvar_ms": 0.3 | null, "rto_ms": 50.0,
//                   "queries": 10, "timeouts": 0, "refusals": 0, "probes": 0, "downs": 0,
//                   "consecutive_failures": 0,
//                   (down only:) "down_for_s": 12.5, "next_probe_in_ms": 800, "backoff_ms": 2000}]}
//
// Costs: one file of about 300 bytes per upstream, written once a second by the
// supervisor (tmpfs: no disk).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workers/upstream_health.hpp"

namespace dnsarena::workers {

std::string upstream_snapshot_path(const std::string& segment);
// The table's rows as above ("upstreams" only).
nlohmann::json upstream_health_json(const UpstreamHealth& health, std::uint64_t now_us);
// Writes the snapshot of `health` (this process as the supervisor). False (errno set)
// when the file cannot be written.
bool write_upstream_snapshot(const std::string& segment, const UpstreamHealth& health);
void remove_upstream_snapshot(const std::string& segment);
// The snapshot, when present and readable, with "age_s" (since it was written) and
// "supervisor_running" added.
std::optional<nlohmann::json> read_upstream_snapshot(const std::string& segment);

}  // namespace dnsarena::workers

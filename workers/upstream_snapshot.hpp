// SPDX-License-Identifier: GPL-3.0-or-later
// The upstream health table (upstream_health.hpp) as `dnsarena stats` sees it.
//
// The table is an anonymous mapping of the serve's processes, so the supervisor publishes
// it once a second as /dev/shm/.<segment>.upstreams.json (snapshot_file.hpp: written
// whole, with the writer's pid and time; a clean stop removes it). /metrics needs none
// of this: it runs in the supervisor and reads the table.
//
//   {"supervisor_pid": 1234, "written_unix_ms": 1733200000000,
//    "latency_le_ms": [0.1, 0.25, ..., 5000] (the histogram bounds),
//    "upstreams": [{"upstream": "192.0.2.1:53", "state": "up" | "down",
//                   "srtt_ms": 0.8 | null, "rttvar_ms": 0.3 | null, "rto_ms": 50.0,
//                   "queries": 10, "timeouts": 0, "refusals": 0, "probes": 0, "downs": 0,
//                   "consecutive_failures": 0,
//                   "rtt": {"count", "sum_ms", "buckets": [16], "p50_ms", "p90_ms", "p99_ms"}
//                          (latency_histogram.hpp's latency_json),
//                   (down only:) "down_for_s": 12.5, "next_probe_in_ms": 800, "backoff_ms": 2000}]}
//
// Costs: one file of about 500 bytes per upstream, written once a second by the
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

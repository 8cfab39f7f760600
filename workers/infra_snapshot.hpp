// SPDX-License-Identifier: GPL-3.0-or-later
// The recursive workers' infra table (infra_table.hpp) as `dnsarena stats` sees it: its
// size and use, published by the supervisor once a second beside the upstream health
// (snapshot_file.hpp: /dev/shm/.<segment>.infra.json; a clean stop removes it).
//
//   {"supervisor_pid": 1234, "written_unix_ms": 1733200000000,
//    "infra": {"capacity": 16384, "hosts": 12, "lame": 1, "edns_broken": 1,
//              "backing_off": 1, "inserts": 14, "evictions": 0, "host_ttl_s": 900}}
//
//   capacity      records the table holds (hosts and lame records together)
//   hosts         live server records; lame: live (server, zone) lame records
//   edns_broken   servers asked without EDNS; backing_off: servers ranked last after a
//                 timeout, now
//   inserts, evictions  records made, and live records replaced by another, since start
//
// Costs: the supervisor walks the table (1 MiB by default) once a second.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workers/infra_table.hpp"

namespace dnsarena::workers {

std::string infra_snapshot_path(const std::string& segment);
nlohmann::json infra_json(const InfraTable::Stats& st);
// Writes the snapshot of `table` (this process as the supervisor). False (errno set)
// when the file cannot be written.
bool write_infra_snapshot(const std::string& segment, const InfraTable& table);
void remove_infra_snapshot(const std::string& segment);
// The snapshot, when present and readable, with "age_s" and "supervisor_running".
std::optional<nlohmann::json> read_infra_snapshot(const std::string& segment);
// One line for `dnsarena stats`: "infra table: 12 of 16384 records (...)".
std::string infra_text(const nlohmann::json& snapshot);

}  // namespace dnsarena::workers

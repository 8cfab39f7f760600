// SPDX-License-Identifier: GPL-3.0-or-later
// The small JSON files the supervisor publishes next to the segment for `dnsarena stats`
// and `dnsarena top` (workers/upstream_snapshot.hpp, answer_snapshot.hpp, mrc_report.hpp):
// the tables they show are anonymous mappings of the serve's processes, which no other
// process can map. Here, below workers/, so that the operator commands (admin/) read them.
//
// A file is /dev/shm/.<segment>.<what>.json (a dot file, so nothing that lists the
// segment's own files sees it), written to a temporary and renamed over the old one, so
// a reader never sees half of one. Each holds "supervisor_pid" and "written_unix_ms"; a
// reader adds "age_s" (since it was written) and "supervisor_running" (whether that pid
// still runs: a killed supervisor leaves its last file behind).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dnsarena::common {

std::string snapshot_path(const std::string& segment, const std::string& what);
// Writes `body` with this process as the supervisor. False (errno set) when the file
// cannot be written.
bool write_snapshot(const std::string& path, nlohmann::json body);
// The file, when present and a JSON object holding `key`, with "age_s" and
// "supervisor_running" added.
std::optional<nlohmann::json> read_snapshot(const std::string& path, const std::string& key);

}  // namespace dnsarena::common

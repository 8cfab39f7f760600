// SPDX-License-Identifier: GPL-3.0-or-later
// The answer metrics (answer_metrics.hpp) as `dnsarena stats` sees them: the supervisor
// writes their sum over the workers once a second, with the upstream snapshot, to
// /dev/shm/.<segment>.answers.json (snapshot_file.hpp: written whole; a clean stop
// removes it).
//
//   {"supervisor_pid": 1234, "written_unix_ms": 1733200000000,
//    "latency_le_ms": [0.1, 0.25, ..., 5000] (the histogram bounds),
//    "answers": {"hit": H, "miss": H,          H: {"count", "sum_ms", "buckets": [16],
//                                                   "p50_ms", "p90_ms", "p99_ms"}
//                "rcodes": {"NOERROR": 10, "FORMERR": 0, ..., "other": 0},
//                "qtypes": {"A": 7, "AAAA": 3, ..., "other": 0},
//                "policy": {"rpz.example.": {"qname": 5, "cname_chain": 1, "response_ip": 0,
//                           "client_ip": 0}, ...},   (policy_counters.hpp)
//                "proxy": {"accepted": 4, "local": 0, "no_header": 1, "malformed": 0,
//                          "unlisted": 0}}}   (PROXY v2 headers: proxy_counts.hpp)
//
// Costs: one file of about 1 KB, whatever the number of workers.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workers/answer_metrics.hpp"

namespace dnsarena::workers {

std::string answer_snapshot_path(const std::string& segment);
// The "answers" object above.
nlohmann::json answer_metrics_json(const AnswerMetrics::Totals& t);
// False (errno set) when the file cannot be written.
bool write_answer_snapshot(const std::string& segment, const AnswerMetrics& metrics);
void remove_answer_snapshot(const std::string& segment);
// The snapshot, when present and readable, with "age_s" and "supervisor_running" added.
std::optional<nlohmann::json> read_answer_snapshot(const std::string& segment);

}  // namespace dnsarena::workers

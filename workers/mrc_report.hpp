// SPDX-License-Identifier: GPL-3.0-or-later
// The miss-ratio curves (miss_ratio_curves.hpp) as the operator sees them: the JSON the
// supervisor publishes once a second to /dev/shm/.<segment>.mrc.json (snapshot_file.hpp)
// for `dnsarena stats --mrc` and `dnsarena top`, its Prometheus gauges, and the table.
//
//   {"supervisor_pid": 1234, "written_unix_ms": ..., "created_unix": ...,
//    "sample_rate": R, "shared_bytes": B (header + models), "real_max_entries": C,
//    "real_arena_bytes": A, "real_segment_bytes": S,
//    "models": [{"factor": f, "sample_rate": R_f, "capacity_entries": f C,
//                "capacity_arena_bytes": f A, "requests": n, "hits": h,
//                "hit_rate": the estimate (miss_ratio_curves.hpp: SHARDS-adj),
//                "sampled_hit_rate": h/n, "expected_requests": R_f x requests seen,
//                "entries": live/R_f (full scale), "sampled_entries": live,
//                "model_max_entries", "model_arena_bytes", "model_regions",
//                "evictions", "expirations", "refused", "lock_skips"}, ...]}
//
// Prometheus (label factor="0.125" .. "8"): dnsarena_mrc_hit_ratio, dnsarena_mrc_entries,
// dnsarena_mrc_capacity_arena_bytes, dnsarena_mrc_capacity_entries (gauges),
// dnsarena_mrc_requests_total (counter); dnsarena_mrc_sample_rate and
// dnsarena_mrc_shared_bytes (gauges, no label). Upstream queries per capacity are
// rate(dnsarena_queries...) x (1 - hit ratio), left to the query language.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workers/miss_ratio_curves.hpp"

namespace dnsarena::workers {

nlohmann::json mrc_json(const MissRatioCurves& curves, std::uint64_t real_segment_bytes);
std::string mrc_snapshot_path(const std::string& segment);
// False (errno set) when the file cannot be written.
bool write_mrc_snapshot(const std::string& segment, const MissRatioCurves& curves, std::uint64_t real_segment_bytes);
void remove_mrc_snapshot(const std::string& segment);
// The snapshot, when present and readable, with "age_s" and "supervisor_running".
std::optional<nlohmann::json> read_mrc_snapshot(const std::string& segment);

std::string prometheus_text(const MissRatioCurves& curves);

// `stats --mrc`'s table of a snapshot: per factor the capacity, its arena bytes, the
// entries it would hold, the predicted hit rate and the upstream queries per second at
// `queries_per_s` (the host's rate today; < 0: unknown, printed "-"), then the memory
// the curves take. Adds "upstream_qps" to each model of `snap` when the rate is known.
std::string mrc_table(nlohmann::json& snap, double queries_per_s, double real_hit_rate);

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_snapshot.hpp"

#include <unistd.h>

#include "workers/snapshot_file.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

std::string upstream_snapshot_path(const std::string& segment) { return snapshot_path(segment, "upstreams"); }

nlohmann::json upstream_health_json(const UpstreamHealth& health, std::uint64_t now_us) {
  nlohmann::json rows = nlohmann::json::array();
  for (unsigned i = 0; i < health.size(); ++i) {
    const UpstreamHealth::Snapshot s = health.snapshot(i, now_us);
    nlohmann::json r{{"upstream", s.endpoint},
                     {"state", s.down ? "down" : "up"},
                     {"srtt_ms", s.sampled ? nlohmann::json(s.srtt_ms) : nlohmann::json()},
                     {"rttvar_ms", s.sampled ? nlohmann::json(s.rttvar_ms) : nlohmann::json()},
                     {"rto_ms", s.rto_ms},
                     {"queries", s.queries},
                     {"timeouts", s.timeouts},
                     {"refusals", s.refusals},
                     {"probes", s.probes},
                     {"downs", s.downs},
                     {"consecutive_failures", s.consecutive},
                     {"rtt", latency_json(s.rtt)}};
    if (s.down) {
      r["down_for_s"] = s.down_for_s;
      r["next_probe_in_ms"] = s.next_probe_in_ms;
      r["backoff_ms"] = s.backoff_ms;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

bool write_upstream_snapshot(const std::string& segment, const UpstreamHealth& health) {
  return write_snapshot(upstream_snapshot_path(segment), {{"latency_le_ms", latency_bounds_ms_json()},
                                                          {"upstreams", upstream_health_json(health, monotonic_us())}});
}

void remove_upstream_snapshot(const std::string& segment) { ::unlink(upstream_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_upstream_snapshot(const std::string& segment) {
  return read_snapshot(upstream_snapshot_path(segment), "upstreams");
}

}  // namespace dnsarena::workers

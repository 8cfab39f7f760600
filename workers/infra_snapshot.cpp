// SPDX-License-Identifier: GPL-3.0-or-later
// The infra table's size and use for `dnsarena stats` (infra_snapshot.hpp).
#include "workers/infra_snapshot.hpp"

#include <unistd.h>

#include <cstdio>

#include "common/monotonic_clock.hpp"
#include "workers/snapshot_file.hpp"

namespace dnsarena::workers {

std::string infra_snapshot_path(const std::string& segment) { return snapshot_path(segment, "infra"); }

nlohmann::json infra_json(const InfraTable::Stats& st) {
  return {{"capacity", st.capacity},       {"hosts", st.hosts},           {"lame", st.lame},
          {"edns_broken", st.edns_broken}, {"backing_off", st.backing_off}, {"inserts", st.inserts},
          {"evictions", st.evictions},     {"host_ttl_s", InfraTable::kHostTtlS}};
}

bool write_infra_snapshot(const std::string& segment, const InfraTable& table) {
  return write_snapshot(infra_snapshot_path(segment), {{"infra", infra_json(table.stats(common::monotonic_ms()))}});
}

void remove_infra_snapshot(const std::string& segment) { ::unlink(infra_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_infra_snapshot(const std::string& segment) {
  return read_snapshot(infra_snapshot_path(segment), "infra");
}

std::string infra_text(const nlohmann::json& snapshot) {
  const nlohmann::json& i = snapshot["infra"];
  auto n = [&](const char* key) { return i.value(key, 0ull); };
  char line[320];
  std::snprintf(line, sizeof line,
                "infra table: %llu servers and %llu lame records of %llu (host TTL %llu s); EDNS broken %llu, "
                "backing off %llu; %llu made, %llu evicted (as of %.1f s ago)\n",
                n("hosts"), n("lame"), n("capacity"), n("host_ttl_s"), n("edns_broken"), n("backing_off"), n("inserts"),
                n("evictions"), snapshot.value("age_s", 0.0));
  return line;
}

}  // namespace dnsarena::workers

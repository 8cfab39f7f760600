// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/mrc_report.hpp"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "workers/snapshot_file.hpp"

namespace dnsarena::workers {

nlohmann::json mrc_json(const MissRatioCurves& curves, std::uint64_t real_segment_bytes) {
  const MrcHeader& h = curves.header();
  nlohmann::json models = nlohmann::json::array();
  for (const MrcModelStats& m : curves.read()) {
    models.push_back({{"factor", m.factor},
                      {"sample_rate", m.rate},
                      {"capacity_entries", static_cast<double>(h.real_entries) * m.factor},
                      {"capacity_arena_bytes", static_cast<double>(h.real_arena) * m.factor},
                      {"requests", m.lookups},
                      {"hits", m.hits},
                      {"hit_rate", m.hit_rate()},
                      {"sampled_hit_rate", m.raw_hit_rate()},
                      {"expected_requests", m.expected},
                      {"entries", m.scaled_entries()},
                      {"sampled_entries", m.live_entries},
                      {"model_max_entries", m.max_entries},
                      {"model_arena_bytes", m.arena_bytes},
                      {"evictions", m.evictions},
                      {"expirations", m.expirations},
                      {"refused", m.refused},
                      {"lock_skips", m.lock_skips}});
  }
  return {{"created_unix", h.created_unix},     {"sample_rate", h.base_rate},
          {"shared_bytes", curves.shared_bytes()}, {"real_max_entries", h.real_entries},
          {"real_arena_bytes", h.real_arena},   {"real_segment_bytes", real_segment_bytes},
          {"models", models}};
}

std::string mrc_snapshot_path(const std::string& segment) { return snapshot_path(segment, "mrc"); }

bool write_mrc_snapshot(const std::string& segment, const MissRatioCurves& curves, std::uint64_t real_segment_bytes) {
  return write_snapshot(mrc_snapshot_path(segment), mrc_json(curves, real_segment_bytes));
}

void remove_mrc_snapshot(const std::string& segment) { ::unlink(mrc_snapshot_path(segment).c_str()); }

std::optional<nlohmann::json> read_mrc_snapshot(const std::string& segment) {
  return read_snapshot(mrc_snapshot_path(segment), "models");
}

std::string prometheus_text(const MissRatioCurves& curves) {
  const std::vector<MrcModelStats> models = curves.read();
  const MrcHeader& h = curves.header();
  std::ostringstream o;
  auto family = [&](const char* name, const char* type, const char* help, auto value) {
    o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
    for (const MrcModelStats& m : models) {
      char label[32];
      std::snprintf(label, sizeof label, "%g", m.factor);
      o << name << "{factor=\"" << label << "\"} " << value(m) << "\n";
    }
  };
  family("dnsarena_mrc_hit_ratio", "gauge", "Predicted hit ratio at this multiple of the configured capacity",
         [](const MrcModelStats& m) { return m.hit_rate(); });
  family("dnsarena_mrc_entries", "gauge", "Entries a cache of this capacity would hold (sampled, scaled up)",
         [](const MrcModelStats& m) { return m.scaled_entries(); });
  family("dnsarena_mrc_capacity_entries", "gauge", "Live-entry limit of this capacity",
         [&](const MrcModelStats& m) { return static_cast<double>(h.real_entries) * m.factor; });
  family("dnsarena_mrc_capacity_arena_bytes", "gauge", "Arena bytes of this capacity",
         [&](const MrcModelStats& m) { return static_cast<double>(h.real_arena) * m.factor; });
  family("dnsarena_mrc_requests_total", "counter", "Sampled requests fed to the model of this capacity",
         [](const MrcModelStats& m) { return m.lookups; });
  o << "# HELP dnsarena_mrc_sample_rate Share of keys fed to the 1x model\n# TYPE dnsarena_mrc_sample_rate gauge\n"
    << "dnsarena_mrc_sample_rate " << h.base_rate << "\n";
  o << "# HELP dnsarena_mrc_shared_bytes Shared memory of the miss-ratio curves\n"
       "# TYPE dnsarena_mrc_shared_bytes gauge\n"
    << "dnsarena_mrc_shared_bytes " << curves.shared_bytes() << "\n";
  return o.str();
}

namespace {

// 1234567 -> "1.2M", bytes -> "MiB"/"GiB".
std::string human(double v, bool bytes) {
  char t[32];
  if (bytes) {
    if (v >= 1024.0 * 1024 * 1024) std::snprintf(t, sizeof t, "%.1f GiB", v / (1024.0 * 1024 * 1024));
    else std::snprintf(t, sizeof t, "%.1f MiB", v / (1024.0 * 1024));
  } else if (v >= 1e6) {
    std::snprintf(t, sizeof t, "%.2fM", v / 1e6);
  } else if (v >= 1e3) {
    std::snprintf(t, sizeof t, "%.1fk", v / 1e3);
  } else {
    std::snprintf(t, sizeof t, "%.0f", v);
  }
  return t;
}

}  // namespace

std::string mrc_table(nlohmann::json& snap, double queries_per_s, double real_hit_rate) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "miss-ratio curve (as of %.1f s ago; sample rate %.6g; cache hit rate now %.1f%%):\n",
                snap.value("age_s", 0.0), snap["sample_rate"].get<double>(), 100.0 * real_hit_rate);
  out += line;
  std::snprintf(line, sizeof line, "  %-7s %12s %11s %12s %9s %13s %10s\n", "factor", "capacity", "arena", "entries",
                "hit%", "upstream q/s", "requests");
  out += line;
  for (nlohmann::json& m : snap["models"]) {
    const double hit = m["hit_rate"].get<double>();
    char upstream[32] = "-";
    if (queries_per_s >= 0) {
      m["upstream_qps"] = queries_per_s * (1.0 - hit);
      std::snprintf(upstream, sizeof upstream, "%.0f", queries_per_s * (1.0 - hit));
    }
    std::snprintf(line, sizeof line, "  %-7g %12s %11s %12s %8.1f%% %13s %10llu\n", m["factor"].get<double>(),
                  human(m["capacity_entries"].get<double>(), false).c_str(),
                  human(m["capacity_arena_bytes"].get<double>(), true).c_str(),
                  human(m["entries"].get<double>(), false).c_str(), 100.0 * hit, upstream,
                  m["requests"].get<unsigned long long>());
    out += line;
  }
  const double shared = snap["shared_bytes"].get<double>(), seg = snap["real_segment_bytes"].get<double>();
  std::snprintf(line, sizeof line, "  curves' shared memory: %.2f MiB (%.2f%% of the segment)\n", shared / (1 << 20),
                seg > 0 ? 100.0 * shared / seg : 0.0);
  out += line;
  return out;
}

}  // namespace dnsarena::workers

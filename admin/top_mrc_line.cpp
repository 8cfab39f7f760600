// SPDX-License-Identifier: GPL-3.0-or-later
#include "admin/top_mrc_line.hpp"

#include <cstdio>

#include "common/snapshot_file.hpp"

namespace dnsarena::admin {

TopMrc read_top_mrc(const std::string& segment, double hit_rate_now) {
  TopMrc m;
  m.segment = segment;
  m.hit_rate_now = hit_rate_now;
  // The file name and its "models" key: workers/mrc_report.cpp (mrc_snapshot_path).
  const std::optional<nlohmann::json> snap =
      common::read_snapshot(common::snapshot_path(segment, "mrc"), "models");
  if (!snap) {
    m.off_reason = "no curve for segment '" + segment +
                   "': serve runs with mrc.enabled false, or is not running";
    return m;
  }
  m.age_s = snap->value("age_s", 0.0);
  m.supervisor_running = snap->value("supervisor_running", false);
  const nlohmann::json& models = (*snap)["models"];
  if (models.is_array())
    for (const nlohmann::json& model : models) {
      if (!model.is_object()) continue;
      const auto f = model.find("factor"), h = model.find("hit_rate");
      if (f == model.end() || h == model.end() || !f->is_number() || !h->is_number()) continue;
      m.points.emplace_back(f->get<double>(), h->get<double>());
    }
  if (m.points.empty()) m.off_reason = "the curve of segment '" + segment + "' has no readable point";
  return m;
}

std::string top_mrc_line(const TopMrc& m) {
  if (m.points.empty()) return "mrc  off (" + m.off_reason + ")\n";
  std::string line = "mrc  now ";
  char t[64];
  std::snprintf(t, sizeof t, "%.1f%%", 100.0 * m.hit_rate_now);
  line += t;
  for (const auto& [factor, hit] : m.points) {
    std::snprintf(t, sizeof t, "  %gx %.1f%%", factor, 100.0 * hit);
    line += t;
  }
  if (!m.supervisor_running) {
    std::snprintf(t, sizeof t, "  (serve not running; as of %.0f s ago)", m.age_s);
    line += t;
  }
  return line + "\n";
}

nlohmann::json top_mrc_json(const TopMrc& m) {
  if (m.points.empty()) return {{"enabled", false}, {"reason", m.off_reason}};
  nlohmann::json points = nlohmann::json::array();
  for (const auto& [factor, hit] : m.points) points.push_back({{"factor", factor}, {"hit_rate", hit}});
  return {{"enabled", true},
          {"hit_rate_now", m.hit_rate_now},
          {"age_s", m.age_s},
          {"supervisor_running", m.supervisor_running},
          {"points", points}};
}

}  // namespace dnsarena::admin

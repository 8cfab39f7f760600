// SPDX-License-Identifier: GPL-3.0-or-later
#include "calibration.hpp"

#include <tbb/parallel_for.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cache/format_version.hpp"
#include "sim/layouts/churn_measure.hpp"
#include "sim/layouts/layout_measure.hpp"

// NOTE: measure_layouts is referenced weakly so this module links (and its tests run)
// even in a build where the layouts code is absent; calling it then gives a clear error.
namespace dnsarena::sim {
std::vector<LayoutRow> measure_layouts(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                       bool measure_speed) __attribute__((weak));
std::vector<ChurnRow> measure_churn(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed)
    __attribute__((weak));
}  // namespace dnsarena::sim

namespace dnsarena::sim::fleet {

LayoutMeasurer layouts_measurer() {
  return [](const TrafficProfile& p, std::uint64_t entries, std::uint64_t seed) {
    if (&dnsarena::sim::measure_layouts == nullptr || &dnsarena::sim::measure_churn == nullptr)
      throw std::runtime_error("calibration needs the layouts code (sim/layouts measure_layouts), which is not in this "
                               "build; pass --calibration FILE with measured rows");
    std::vector<LayoutBytes> out;
    for (const LayoutRow& r : dnsarena::sim::measure_layouts(p, entries, seed, false))
      out.push_back({r.layout, r.net_bytes, r.alloc_bytes});
    for (const ChurnRow& c : dnsarena::sim::measure_churn(p, entries, seed))
      for (LayoutBytes& b : out)
        if (b.layout == c.layout && c.measured && c.alloc_bytes > 0) {
          b.resident_ratio = c.resident_ratio;
          b.active_ratio = c.active_bytes / c.alloc_bytes;
          b.retained_ratio = c.retained_bytes / c.alloc_bytes;
        }
    return out;
  };
}

std::string build_id() {
  // "churn-1": rows carry the churn-measured resident ratios (files without them are measured again).
  return std::string("dnsarena-0.1.0/format-") + std::to_string(cache::kFormatVersion) + "/churn-1";
}

TrafficProfile calibration_profile(const TrafficProfile& traffic, double ecs_entry_share) {
  TrafficProfile p = traffic;
  p.other_rdata_min = std::max(2u, traffic.other_rdata_min);
  p.other_rdata_max = std::min(255u, std::max(p.other_rdata_min, traffic.other_rdata_max));
  p.ecs_share = std::clamp(ecs_entry_share, 0.0, 1.0);
  p.ecs_subnets = std::max<std::uint32_t>(1, traffic.ecs_subnets);
  return p;
}

std::string profile_hash(const TrafficProfile& p, std::uint64_t entries, std::uint64_t seed) {
  std::ostringstream s;
  s.precision(17);
  s << p.share_a << ',' << p.share_aaaa << ',' << p.share_other << ',' << p.records_min << ',' << p.records_max << ','
    << p.other_rdata_min << ',' << p.other_rdata_max << ',' << p.labels_min << ',' << p.labels_max << ','
    << p.label_bytes_min << ',' << p.label_bytes_max << ',' << p.ttl.lowest() << ',' << p.ttl.highest() << ','
    << p.ecs_share << ',' << int(p.ecs_prefix) << ',' << p.ecs_subnets << ',' << p.negative_share << ','
    << p.cname_share << ',' << entries << ',' << seed;
  const std::string text = s.str();
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across builds and platforms
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Calibration::Calibration(std::string path, LayoutMeasurer measurer, std::uint64_t entries, std::uint64_t seed)
    : path_(std::move(path)), measurer_(std::move(measurer)), entries_(entries), seed_(seed) {
  if (path_.empty() || !std::filesystem::exists(path_)) return;
  std::ifstream in(path_);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error(path_ + ": calibration file is not valid JSON (" + e.what() + "); delete it to re-measure");
  }
  if (j.value("build", "") != build_id()) return;  // another build: measure again
  for (const auto& [key, rows] : j.at("profiles").items()) {
    auto& v = rows_[key];
    for (const auto& r : rows.at("rows"))
      v.push_back({r.at("layout").get<std::string>(), r.at("net_bytes").get<double>(), r.at("alloc_bytes").get<double>(),
                   r.at("resident_ratio").get<double>(), r.at("active_ratio").get<double>(),
                   r.at("retained_ratio").get<double>()});
  }
}

const std::vector<LayoutBytes>& Calibration::rows(const TrafficProfile& p) {
  const std::string key = profile_hash(p, entries_, seed_);
  auto it = rows_.find(key);
  if (it != rows_.end()) {
    ++reused_;
    return it->second;
  }
  std::vector<LayoutBytes> measured = measurer_(p, entries_, seed_);
  if (measured.empty()) throw std::runtime_error("layout calibration returned no rows");
  ++measured_;
  auto& slot = rows_[key] = std::move(measured);
  save();
  return slot;
}

void Calibration::measure_missing(const std::vector<TrafficProfile>& profiles) {
  std::vector<std::pair<std::string, TrafficProfile>> todo;
  for (const TrafficProfile& p : profiles) {
    std::string key = profile_hash(p, entries_, seed_);
    if (rows_.count(key)) continue;
    bool queued = false;
    for (const auto& [k, q] : todo) queued = queued || k == key;
    if (!queued) todo.emplace_back(std::move(key), p);
  }
  if (todo.empty()) return;
  std::vector<std::vector<LayoutBytes>> measured(todo.size());
  tbb::parallel_for(std::size_t{0}, todo.size(), [&](std::size_t i) { measured[i] = measurer_(todo[i].second, entries_, seed_); });
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (measured[i].empty()) throw std::runtime_error("layout calibration returned no rows");
    rows_[todo[i].first] = std::move(measured[i]);
    ++measured_;
  }
  save();
}

const LayoutBytes& Calibration::layout(const TrafficProfile& p, const std::string& name) {
  const auto& v = rows(p);
  for (const auto& r : v)
    if (r.layout == name) return r;
  std::string known;
  for (const auto& r : v) known += (known.empty() ? "" : ", ") + r.layout;
  throw std::runtime_error("unknown layout '" + name + "' (measured layouts: " + known + ")");
}

void Calibration::save() const {
  if (path_.empty()) return;
  nlohmann::json j;
  j["build"] = build_id();
  j["entries"] = entries_;
  j["seed"] = seed_;
  auto& profiles = j["profiles"] = nlohmann::json::object();
  for (const auto& [key, rows] : rows_) {
    auto& arr = profiles[key]["rows"] = nlohmann::json::array();
    for (const auto& r : rows)
      arr.push_back({{"layout", r.layout}, {"net_bytes", r.net_bytes}, {"alloc_bytes", r.alloc_bytes},
                     {"resident_ratio", r.resident_ratio}, {"active_ratio", r.active_ratio},
                     {"retained_ratio", r.retained_ratio}});
  }
  const std::filesystem::path p(path_);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(path_);
  out << j.dump(2) << "\n";
  if (!out) throw std::runtime_error(path_ + ": cannot write calibration file");
}

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
#include "fleet_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "common/yaml_reader.hpp"

namespace dnsarena::sim::fleet {

using common::ConfigError;
using common::load_yaml_file;
using common::MapReader;
using common::where;

std::uint64_t FleetConfig::total_instances() const {
  std::uint64_t n = 0;
  for (const auto& d : datacenters) n += d.instances;
  return n;
}

namespace {

constexpr double kTiny = 1e-9;

// Reads datacenter keys from `r` into `d` (keys absent keep d's values).
void read_datacenter_keys(MapReader& r, Datacenter& d) {
  if (r.has("name")) d.name = r.text("name");
  if (r.has("instances")) d.instances = static_cast<std::uint32_t>(r.integer("instances", 1, 1'000'000));
  if (r.has("rate_qps")) {
    MapReader q = r.map("rate_qps");
    d.rate_median_qps = q.number("median", 0.01, 1e7);
    d.rate_spread = q.number_or("spread", d.rate_spread, 0, 3);
    q.finish();
  }
  if (r.has("traffic")) {
    MapReader t = r.map("traffic");
    sim::read_traffic_profile(t, d.traffic);
    t.finish();
  }
  if (r.has("memory")) {
    MapReader q = r.map("memory");
    d.memory_budget_gb = q.number("budget_gb", 0.01, 1e5);
    d.process_gb = q.number("process_gb", 0, 1e5);
    q.finish();
    if (d.process_gb >= d.memory_budget_gb) r.fail("memory", "process_gb must be below budget_gb");
  }
  if (r.has("capacity")) d.capacity = r.integer("capacity", 1, 100'000'000'000ull);
  if (r.has("restarts_per_day")) d.restarts_per_day = r.number("restarts_per_day", 0, 24);
  if (r.has("stale")) {
    MapReader q = r.map("stale");
    d.stale_max_age_s = static_cast<std::uint32_t>(q.integer("max_age_s", 0, 30u * 86'400));
    q.finish();
  }
  if (r.has("prefetch")) {
    MapReader q = r.map("prefetch");
    d.prefetch_percent = q.number("percent", 0, 50);
    q.finish();
  }
}

Datacenter read_datacenter(const std::string& file, const YAML::Node& node, std::size_t index) {
  Datacenter d;
  const std::string ctx = "datacenters[" + std::to_string(index) + "]";
  MapReader r(file, node, ctx);
  d.file = file;
  if (r.has("from")) {
    const std::string rel = r.text("from");
    const std::filesystem::path base = std::filesystem::path(file).parent_path();
    const std::string path = (base / rel).lexically_normal().string();
    const YAML::Node profile = load_yaml_file(path);
    MapReader pr(path, profile, "");
    read_datacenter_keys(pr, d);
    pr.finish();
  }
  read_datacenter_keys(r, d);
  r.finish();
  if (d.name.empty()) r.fail("name", "missing required key (in the entry or its 'from' file)");
  return d;
}

}  // namespace

FleetConfig load_fleet(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  MapReader r(path, root, "");
  FleetConfig f;
  f.file = path;
  f.name = r.text("name");
  f.seed = r.integer_or("seed", 1, 0, ~0ull >> 12);
  f.layout = r.text_or("layout", "v0");
  if (r.has("model")) {
    MapReader m = r.map("model");
    f.sample_entries = static_cast<std::uint32_t>(m.integer_or("sample_entries", f.sample_entries, 256, 10'000'000));
    f.max_sample_rate = m.number_or("max_sample_rate", f.max_sample_rate, 1e-6, 1.0);
    f.curve_max_days = static_cast<std::uint32_t>(m.integer_or("curve_max_days", f.curve_max_days, 1, 120));
    f.calibration_entries = m.integer_or("calibration_entries", f.calibration_entries, 1000, 10'000'000);
    m.finish();
  }
  const YAML::Node dcs = r.sequence("datacenters");
  std::set<std::string> names;
  for (std::size_t i = 0; i < dcs.size(); ++i) {
    Datacenter d = read_datacenter(path, dcs[i], i);
    if (!names.insert(d.name).second)
      throw ConfigError(where(path, dcs[i]) + ": key 'datacenters[" + std::to_string(i) + "].name': duplicate datacenter '" +
                        d.name + "'");
    f.datacenters.push_back(std::move(d));
  }
  if (f.datacenters.empty()) r.fail("datacenters", "needs at least one datacenter");
  r.finish();
  return f;
}

namespace {

// outages: [{datacenter, at, minutes}]: within the simulated span, the datacenter one of
// the fleet's, no two of one datacenter overlapping.
void read_outages(MapReader& r, const FleetConfig& fleet, RolloutPlan& p) {
  const YAML::Node list = r.sequence("outages");
  const std::int64_t span_minutes = (p.sim_end_day - p.sim_start_day) * 1440;
  for (std::size_t i = 0; i < list.size(); ++i) {
    MapReader o(r.file(), list[i], "outages[" + std::to_string(i) + "]");
    Outage out;
    out.datacenter = o.text("datacenter");
    const auto it = std::find_if(fleet.datacenters.begin(), fleet.datacenters.end(),
                                 [&](const Datacenter& d) { return d.name == out.datacenter; });
    if (it == fleet.datacenters.end())
      o.fail("datacenter", "not a datacenter of fleet '" + fleet.name + "': '" + out.datacenter + "'");
    out.dc = static_cast<std::size_t>(it - fleet.datacenters.begin());
    try {
      out.minute = parse_date_time_minutes(o.text("at")) - p.sim_start_day * 1440;
    } catch (const std::invalid_argument& e) {
      o.fail("at", e.what());
    }
    out.minutes = static_cast<std::uint32_t>(o.integer("minutes", 1, 7 * 1440));
    o.finish();
    if (out.minute < 0 || out.minute + out.minutes > span_minutes)
      o.fail("at", "the outage must lie within the simulated span (" + format_date_days(p.sim_start_day) + " .. " +
                       format_date_days(p.sim_end_day) + ")");
    for (const Outage& other : p.outages)
      if (other.dc == out.dc && out.minute < other.minute + other.minutes && other.minute < out.minute + out.minutes)
        o.fail("at", "overlaps another outage of datacenter '" + out.datacenter + "'");
    p.outages.push_back(out);
  }
  std::sort(p.outages.begin(), p.outages.end(),
            [](const Outage& a, const Outage& b) { return std::tie(a.dc, a.minute) < std::tie(b.dc, b.minute); });
}

}  // namespace

RolloutPlan load_plan(const std::string& path, const FleetConfig& fleet) {
  const YAML::Node root = load_yaml_file(path);
  MapReader r(path, root, "");
  RolloutPlan p;
  p.file = path;
  p.from = r.text("from");
  p.to = r.text("to");
  auto date = [&](MapReader& m, const std::string& key) {
    try {
      return parse_date_days(m.text(key));
    } catch (const std::invalid_argument& e) {
      m.fail(key, e.what());
    }
  };
  p.start_day = date(r, "start");
  p.end_day = date(r, "end");
  if (p.end_day < p.start_day) r.fail("end", "the rollout ends before it starts");
  p.sim_start_day = r.has("sim_start") ? date(r, "sim_start") : p.start_day - 14;
  p.sim_end_day = r.has("sim_end") ? date(r, "sim_end") : p.end_day + 14;
  r.raw("sim_start");
  r.raw("sim_end");
  if (p.sim_start_day > p.start_day) r.fail("sim_start", "must not be after the rollout start");
  if (p.sim_end_day < p.end_day) r.fail("sim_end", "must not be before the rollout end");
  if (p.sim_end_day - p.sim_start_day > 400) r.fail("sim_end", "simulated span is limited to 400 days");
  p.step_minutes = static_cast<std::uint32_t>(r.integer_or("step_minutes", 1, 1, 1440));
  p.wave_spread_hours = r.number_or("wave_spread_hours", p.wave_spread_hours, 0, 24 * 14);
  if (r.has("capacity_change")) {
    const YAML::Node n = r.raw("capacity_change");
    const std::string s = n.IsScalar() ? n.Scalar() : "";
    if (s == "none" || s == "reinvest") {
      p.capacity_change = s;
    } else {
      try {
        p.capacity_factor = n.as<double>();
      } catch (const YAML::Exception&) {
        r.fail_at(n, "capacity_change", "expected none, reinvest or a factor, got '" + s + "'");
      }
      if (!(p.capacity_factor > 0.01 && p.capacity_factor <= 100))
        r.fail_at(n, "capacity_change", "factor out of range (0.01, 100]");
      p.capacity_change = "factor";
    }
  }
  const std::string upgrade = r.text_or("upgrade", "cold");
  if (upgrade != "warm" && upgrade != "cold") r.fail("upgrade", "expected warm or cold, got '" + upgrade + "'");
  p.warm_upgrade = upgrade == "warm";
  if (r.has("published")) {
    MapReader pub = r.map("published");
    p.published_p90_after_gb = pub.number_or("p90_after_gb", 0.0, 0.0, 1e6);
    p.published_p99_after_gb = pub.number_or("p99_after_gb", 0.0, 0.0, 1e6);
    p.published_p90_before_gb = pub.number_or("p90_before_gb", 0.0, 0.0, 1e6);
    p.published_p99_before_gb = pub.number_or("p99_before_gb", 0.0, 0.0, 1e6);
    if ((p.published_p90_before_gb > 0) != (p.published_p99_before_gb > 0))
      pub.fail(pub.has("p90_before_gb") ? "p90_before_gb" : "p99_before_gb",
               "the before-state fit needs both p90_before_gb and p99_before_gb");
    if (p.published_p90_before_gb > 0 && !(p.published_p99_before_gb > p.published_p90_before_gb))
      pub.fail("p99_before_gb", "must be above p90_before_gb (two points of one line)");
    pub.finish();
  }
  const YAML::Node waves = r.sequence("waves");
  std::set<std::string> dc_names;
  for (const auto& d : fleet.datacenters) dc_names.insert(d.name);
  double last_share = 0;
  std::int64_t last_day = p.start_day;
  for (std::size_t i = 0; i < waves.size(); ++i) {
    MapReader w(path, waves[i], "waves[" + std::to_string(i) + "]");
    Wave wave;
    wave.day = date(w, "date");
    if (wave.day < last_day) w.fail("date", "waves must be in date order, from the rollout start on");
    if (wave.day > p.end_day) w.fail("date", "wave after the rollout end");
    last_day = wave.day;
    wave.share = w.number_or("share", 0.0, 0.0, 1.0);
    if (w.has("share") && wave.share + kTiny < last_share)
      w.fail("share", "shares are cumulative and must not decrease");
    if (w.has("share")) last_share = wave.share;
    if (w.has("datacenters")) {
      const YAML::Node list = w.sequence("datacenters");
      for (const auto& n : list) {
        if (!n.IsScalar() || !dc_names.count(n.Scalar()))
          w.fail_at(n, "datacenters", "not a datacenter of fleet '" + fleet.name + "': '" +
                                          (n.IsScalar() ? n.Scalar() : std::string("?")) + "'");
        wave.datacenters.push_back(n.Scalar());
      }
    }
    w.finish();
    if (wave.share == 0 && wave.datacenters.empty()) w.fail("share", "a wave needs a share or datacenters");
    p.waves.push_back(wave);
  }
  if (p.waves.empty()) r.fail("waves", "needs at least one wave");
  if (r.has("outages")) read_outages(r, fleet, p);
  r.finish();
  return p;
}

std::uint32_t RolloutPlan::longest_outage(std::size_t dc) const {
  std::uint32_t longest = 0;
  for (const Outage& o : outages)
    if (o.dc == dc) longest = std::max(longest, o.minutes);
  return longest;
}

std::int64_t parse_date_time_minutes(const std::string& s) {
  const std::size_t t = s.find('T');
  const std::int64_t day = parse_date_days(s.substr(0, t));
  if (t == std::string::npos) return day * 1440;
  int h = -1, m = -1;
  char extra = 0;
  if (std::sscanf(s.c_str() + t + 1, "%2d:%2d%c", &h, &m, &extra) != 2 || s.size() != t + 6 || h < 0 || h > 23 || m < 0 ||
      m > 59)
    throw std::invalid_argument("expected a time YYYY-MM-DDTHH:MM (00:00 to 23:59), got '" + s + "'");
  return day * 1440 + h * 60 + m;
}

std::int64_t parse_date_days(const std::string& s) {
  int y = 0, m = 0, d = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &extra) != 3)
    throw std::invalid_argument("expected a date YYYY-MM-DD, got '" + s + "'");
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(m)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) throw std::invalid_argument("not a valid date: '" + s + "'");
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

std::string format_date_days(std::int64_t days) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

}  // namespace dnsarena::sim::fleet

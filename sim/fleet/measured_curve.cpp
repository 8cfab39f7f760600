// SPDX-License-Identifier: GPL-3.0-or-later
#include "measured_curve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

namespace dnsarena::sim::fleet {

namespace {

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw CurveFileError(source + ": " + what);
}

const nlohmann::json& field(const nlohmann::json& obj, const char* key, const std::string& source,
                            const std::string& where = "") {
  const auto it = obj.find(key);
  if (it == obj.end()) bad(source, where + "no \"" + key + "\" (not a `dnsarena stats --mrc --json` document?)");
  return *it;
}

double number(const nlohmann::json& obj, const char* key, const std::string& source, const std::string& where = "") {
  const nlohmann::json& v = field(obj, key, source, where);
  if (!v.is_number()) bad(source, where + "\"" + key + "\" is not a number");
  return v.get<double>();
}

std::uint64_t positive_count(const nlohmann::json& obj, const char* key, const std::string& source) {
  const nlohmann::json& v = field(obj, key, source);
  if (!v.is_number_integer() || v.get<std::int64_t>() <= 0) bad(source, std::string("\"") + key + "\" is not a positive integer");
  return v.get<std::uint64_t>();
}

std::string factor_text(double f) {
  char t[32];
  std::snprintf(t, sizeof t, "%gx", f);
  return t;
}

}  // namespace

MeasuredCurve parse_measured_curve(const nlohmann::json& doc, const std::string& source) {
  if (!doc.is_object()) bad(source, "not a JSON object (not a `dnsarena stats --mrc --json` document?)");
  MeasuredCurve c;
  c.source = source;
  c.capacity = positive_count(doc, "real_max_entries", source);
  c.arena_bytes = positive_count(doc, "real_arena_bytes", source);
  c.segment_bytes = positive_count(doc, "real_segment_bytes", source);
  if (const auto dc = doc.find("datacenter"); dc != doc.end()) {
    if (!dc->is_string() || dc->get<std::string>().empty()) bad(source, "\"datacenter\" is not a non-empty string");
    c.datacenter = dc->get<std::string>();
  }
  if (const auto q = doc.find("queries_per_s"); q != doc.end() && !q->is_null()) {
    if (!q->is_number() || q->get<double>() < 0) bad(source, "\"queries_per_s\" is not a number >= 0 or null");
    c.queries_per_s = q->get<double>();
  }
  const nlohmann::json& models = field(doc, "models", source);
  if (!models.is_array()) bad(source, "\"models\" is not an array");
  if (models.empty()) bad(source, "empty curve: \"models\" has no capacity factor");
  std::uint64_t requests = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const nlohmann::json& m = models[i];
    const std::string where = "models[" + std::to_string(i) + "]: ";
    if (!m.is_object()) bad(source, where + "not an object");
    MeasuredPoint p{number(m, "factor", source, where), number(m, "hit_rate", source, where)};
    if (!(p.factor > 0) || !std::isfinite(p.factor)) bad(source, where + "\"factor\" is not > 0");
    if (!(p.hit_rate >= 0 && p.hit_rate <= 1)) bad(source, where + "\"hit_rate\" is not within [0, 1]");
    if (!c.points.empty() && p.factor <= c.points.back().factor) bad(source, where + "factors are not ascending");
    const nlohmann::json& n = field(m, "requests", source, where);
    if (!n.is_number_integer() || n.get<std::int64_t>() < 0) bad(source, where + "\"requests\" is not a count");
    requests += n.get<std::uint64_t>();
    c.points.push_back(p);
  }
  if (c.points.size() < 2) bad(source, "one capacity factor only: a curve needs two to be read between");
  if (requests == 0) bad(source, "empty curve: no request fed to any model yet (serve saw no traffic?)");
  return c;
}

MeasuredCurve load_measured_curve(const std::string& path) {
  std::ifstream f(path);
  if (!f) bad(path, "cannot be read");
  std::stringstream text;
  text << f.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) bad(path, "not JSON (expected the output of `dnsarena stats --mrc --json`)");
  return parse_measured_curve(doc, path);
}

std::string CurveReading::bracket() const {
  if (!in_range) return "beyond measured range (" + factor_text(measured_min) + ".." + factor_text(measured_max) + ")";
  if (lo == hi) return "at " + factor_text(lo);
  return factor_text(lo) + ".." + factor_text(hi);
}

CurveReading read_curve(const std::vector<MeasuredPoint>& points, double factor) {
  CurveReading r;
  r.measured_min = points.front().factor;
  r.measured_max = points.back().factor;
  // A factor within a part in 10^9 of a measured one is that one (capacities are whole entries).
  auto same = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * b; };
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (same(factor, points[i].factor)) {
      r.in_range = true;
      r.lo = r.hi = points[i].factor;
      r.hit_rate = points[i].hit_rate;
      return r;
    }
    if (i + 1 < points.size() && factor > points[i].factor && factor < points[i + 1].factor) {
      const MeasuredPoint &a = points[i], &b = points[i + 1];
      const double t = std::log(factor / a.factor) / std::log(b.factor / a.factor);
      r.in_range = true;
      r.lo = a.factor;
      r.hi = b.factor;
      r.hit_rate = a.hit_rate + t * (b.hit_rate - a.hit_rate);
      return r;
    }
  }
  return r;  // below the smallest or above the largest factor
}

DatacenterCurves::Reading DatacenterCurves::at(double capacity) const {
  Reading out;
  double weighted = 0, weights = 0, qps = 0;
  bool rates = true;
  for (const MeasuredCurve& h : hosts) {
    rates = rates && h.queries_per_s.has_value();
    qps += h.queries_per_s.value_or(0.0);
  }
  const bool by_rate = rates && qps > 0;  // else (no rate, or no query in stats' interval) alike
  for (const MeasuredCurve& h : hosts) {
    const CurveReading r = read_curve(h.points, capacity / static_cast<double>(h.capacity));
    out.curve = r;
    if (!r.in_range) return out;  // the same factors on every host: out of range on all
    const double w = by_rate ? *h.queries_per_s : 1.0;
    weighted += w * r.hit_rate;
    weights += w;
  }
  out.curve.hit_rate = weights > 0 ? weighted / weights : 0.0;
  if (!rates) return out;
  out.queries_per_s = qps;
  out.upstream_qps = qps * (1.0 - out.curve.hit_rate);
  return out;
}

std::pair<std::string, std::string> split_datacenter(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || spec.substr(0, eq).find('/') != std::string::npos) return {"", spec};
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

std::vector<MeasuredCurve> load_curve_specs(const std::vector<std::string>& specs) {
  std::vector<MeasuredCurve> curves;
  for (const std::string& spec : specs) {
    auto [dc, file] = split_datacenter(spec);
    curves.push_back(load_measured_curve(file));
    if (!dc.empty()) curves.back().datacenter = dc;
  }
  return curves;
}

std::vector<DatacenterCurves> group_by_datacenter(std::vector<MeasuredCurve> curves, const FleetConfig& fleet) {
  std::vector<DatacenterCurves> groups;
  for (const Datacenter& dc : fleet.datacenters) groups.push_back({dc.name, {}});
  for (MeasuredCurve& c : curves) {
    if (c.datacenter.empty()) {
      if (fleet.datacenters.size() != 1)
        throw CurveFileError(c.source + ": no datacenter (the fleet " + fleet.name + " has " +
                             std::to_string(fleet.datacenters.size()) +
                             "): add \"datacenter\" to the file or pass --curves DC=" + c.source);
      c.datacenter = fleet.datacenters.front().name;
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](const DatacenterCurves& d) { return d.datacenter == c.datacenter; });
    if (g == groups.end())
      throw CurveFileError(c.source + ": datacenter '" + c.datacenter + "' is not in the fleet " + fleet.name);
    if (!g->hosts.empty()) {
      const MeasuredCurve& first = g->hosts.front();
      auto factors = [](const MeasuredCurve& m) {
        std::vector<double> f;
        for (const MeasuredPoint& p : m.points) f.push_back(p.factor);
        return f;
      };
      auto geometry = [](const MeasuredCurve& m) {
        return std::to_string(m.capacity) + " entries, " + std::to_string(m.arena_bytes) + " arena bytes, " +
               std::to_string(m.segment_bytes) + " segment bytes";
      };
      if (c.capacity != first.capacity || c.arena_bytes != first.arena_bytes || c.segment_bytes != first.segment_bytes)
        throw CurveFileError(c.source + ": another geometry than " + first.source + " in datacenter " + c.datacenter +
                             " (" + geometry(c) + " against " + geometry(first) + ")");
      if (factors(c) != factors(first))
        throw CurveFileError(c.source + ": other capacity factors than " + first.source + " in datacenter " +
                             c.datacenter);
    }
    g->hosts.push_back(std::move(c));
  }
  std::erase_if(groups, [](const DatacenterCurves& d) { return d.hosts.empty(); });
  return groups;
}

}  // namespace dnsarena::sim::fleet

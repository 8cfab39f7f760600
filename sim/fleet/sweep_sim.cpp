// SPDX-License-Identifier: GPL-3.0-or-later
#include "sweep_sim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>

#include "chart.hpp"
#include "curve_codec.hpp"
#include "curve_job.hpp"
#include "rollout_sim.hpp"

namespace dnsarena::sim::fleet {

namespace {

// Curves of one (datacenter, capacity) group, shared by its plans and layouts; misses go
// to the runner that was in use (the MPI ranks under mpirun).
class MemoCurveRunner final : public CurveRunner {
public:
  explicit MemoCurveRunner(CurveRunner& next) : next_(next) {}
  std::vector<OccupancyCurve> run(const FleetConfig& fleet, const std::vector<CurveJob>& jobs) override {
    std::vector<CurveJob> missing;
    std::vector<std::string> keys;
    for (const CurveJob& j : jobs) {
      keys.push_back(encode_job(j));
      if (!memo_.count(keys.back())) {
        memo_[keys.back()];
        missing.push_back(j);
      }
    }
    std::vector<OccupancyCurve> fresh = next_.run(fleet, missing);
    for (std::size_t i = 0; i < missing.size(); ++i) memo_[encode_job(missing[i])] = std::move(fresh[i]);
    computed_ += missing.size();
    std::vector<OccupancyCurve> out;
    for (const std::string& k : keys) out.push_back(memo_.at(k));
    return out;
  }
  void clear() { memo_.clear(); }
  std::size_t computed() const { return computed_; }

private:
  CurveRunner& next_;
  std::map<std::string, OccupancyCurve> memo_;
  std::size_t computed_ = 0;
};

double max_p99(const RolloutResult& r) {
  double peak = 0;
  for (const auto& s : r.steps) peak = std::max(peak, s.p99_gb);
  return peak;
}

// Mean of a step field over the after window (rollout_sim.cpp's: the last 7 days, or
// from the rollout end if later).
double mean_after(const RolloutResult& r, double RolloutStep::*field) {
  const std::int64_t end = r.steps.empty() ? 0 : r.steps.back().minute;
  const std::int64_t from = std::max(r.rollout_end_minute, end - 7 * 1440);
  double sum = 0;
  std::size_t n = 0;
  for (const auto& s : r.steps)
    if (s.minute >= from) sum += s.*field, ++n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

}  // namespace

std::uint64_t SweepCapacity::entries_for(std::uint64_t configured) const {
  const double v = factor ? value * static_cast<double>(configured) : value;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(v)));
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    std::string item = list.substr(at, comma - at);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    at = comma + 1;
  }
  return out;
}

std::vector<SweepCapacity> parse_capacities(const std::string& list) {
  std::vector<SweepCapacity> out;
  for (const std::string& item : split_list(list)) {
    SweepCapacity c;
    c.label = item;
    std::string number = item;
    double scale = 1;
    const char last = number.back();
    if (last == 'x' || last == 'X') c.factor = true, number.pop_back();
    else if (last == 'k' || last == 'K') c.factor = false, scale = 1e3, number.pop_back();
    else if (last == 'M' || last == 'm') c.factor = false, scale = 1e6, number.pop_back();
    else c.factor = false;
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(v) || v <= 0)
      throw std::invalid_argument("--capacities: '" + item +
                                  "' is not a capacity (a factor of each datacenter's capacity like 0.5x, or "
                                  "entries like 4000000, 750k, 4M)");
    c.value = v * scale;
    if (!c.factor && c.value < 1) throw std::invalid_argument("--capacities: '" + item + "' is less than one entry");
    out.push_back(c);
  }
  if (out.empty()) throw std::invalid_argument("--capacities: no capacity given (e.g. 0.5x,1x,2x)");
  return out;
}

SweepResult run_sweep(const FleetConfig& fleet, const std::vector<SweepPlan>& plans,
                      const std::vector<SweepCapacity>& capacities, const std::vector<std::string>& layouts,
                      Calibration& calibration) {
  SweepResult res;
  MemoCurveRunner memo(curve_runner());
  ScopedCurveRunner installed(memo);
  for (const Datacenter& dc : fleet.datacenters) {
    for (const SweepCapacity& cap : capacities) {
      memo.clear();
      FleetConfig one = fleet;
      one.datacenters = {dc};
      one.datacenters[0].capacity = cap.entries_for(dc.capacity);
      for (const SweepPlan& sp : plans) {
        const std::vector<std::string> tos = layouts.empty() ? std::vector<std::string>{sp.plan.to} : layouts;
        for (const std::string& to : tos) {
          RolloutPlan plan = sp.plan;
          plan.to = to;
          const RolloutResult r = run_rollout(one, plan, calibration);
          SweepRow row;
          row.datacenter = dc.name;
          row.plan = sp.name;
          row.layout_from = plan.from;
          row.layout_to = to;
          row.capacity_label = cap.label;
          row.instances = r.instances;
          row.capacity = one.datacenters[0].capacity;
          row.capacity_after = row.capacity;
          if (plan.capacity_change == "factor")
            row.capacity_after = std::max<std::uint64_t>(1, std::llround(row.capacity * plan.capacity_factor));
          else if (plan.capacity_change == "reinvest" && !r.checks.empty() && r.checks[0].bytes_after > 0)
            row.capacity_after = std::max<std::uint64_t>(
                1, std::llround(row.capacity * r.checks[0].bytes_before / r.checks[0].bytes_after));
          row.budget_gb = dc.memory_budget_gb;
          row.p50_before_gb = r.p50_before;
          row.p99_before_gb = r.p99_before;
          row.p99_after_gb = r.p99_after;
          row.p99_peak_gb = max_p99(r);
          row.hit_rate_after = mean_after(r, &RolloutStep::mean_hit_rate);
          row.upstream_qps_after = mean_after(r, &RolloutStep::upstream_qps);
          row.fits = row.p99_peak_gb <= row.budget_gb;
          row.curves = r.curves;
          res.curves_s += r.curves_s;
          res.fleet_s += r.fleet_s;
          res.rows.push_back(row);
        }
      }
    }
  }
  res.curves_computed = memo.computed();
  return res;
}

void write_sweep_csv(const SweepResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << "datacenter,plan,layout_from,layout_to,capacity_label,capacity,capacity_after,instances,budget_gb,"
         "p50_before_gb,p99_before_gb,p99_peak_gb,p99_after_gb,p99_peak_over_budget,hit_rate_after,upstream_qps_after,"
         "fits\n";
  char buf[512];
  for (const SweepRow& w : r.rows) {
    std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%s,%llu,%llu,%llu,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.5f,%.1f,%s\n",
                  w.datacenter.c_str(), w.plan.c_str(), w.layout_from.c_str(), w.layout_to.c_str(),
                  w.capacity_label.c_str(), static_cast<unsigned long long>(w.capacity),
                  static_cast<unsigned long long>(w.capacity_after), static_cast<unsigned long long>(w.instances),
                  w.budget_gb, w.p50_before_gb, w.p99_before_gb, w.p99_peak_gb, w.p99_after_gb,
                  w.budget_gb > 0 ? w.p99_peak_gb / w.budget_gb : 0.0, w.hit_rate_after, w.upstream_qps_after,
                  w.fits ? "yes" : "no");
    out << buf;
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

bool sweep_chart(const SweepResult& r, const std::string& csv, const std::string& out_png, const std::string& title,
                 std::string* why) {
  // One data block per (datacenter, plan, layout), in first-seen order, points in
  // capacity order (gnuplot `index i`); the numbers are the CSV's columns 6, 14 and 15.
  std::vector<std::string> series;
  std::vector<std::vector<const SweepRow*>> rows;
  for (const SweepRow& w : r.rows) {
    const std::string key = w.datacenter + " " + w.plan + " " + w.layout_to;
    const auto it = std::find(series.begin(), series.end(), key);
    if (it == series.end()) series.push_back(key), rows.emplace_back();
    rows[static_cast<std::size_t>(std::find(series.begin(), series.end(), key) - series.begin())].push_back(&w);
  }
  const std::string data = out_png + ".dat";
  {
    std::ofstream out(data);
    out << "# from " << csv << ": capacity p99_peak_over_budget hit_rate_after, one block per series\n";
    char buf[128];
    for (auto& block : rows) {
      std::stable_sort(block.begin(), block.end(), [](const SweepRow* a, const SweepRow* b) { return a->capacity < b->capacity; });
      for (const SweepRow* w : block) {
        std::snprintf(buf, sizeof buf, "%llu %.4f %.5f\n", static_cast<unsigned long long>(w->capacity),
                      w->budget_gb > 0 ? w->p99_peak_gb / w->budget_gb : 0.0, w->hit_rate_after);
        out << buf;
      }
      out << "\n\n";
    }
    if (!out) {
      *why = "cannot write " + data;
      return false;
    }
  }
  std::string s;
  s += "set terminal pngcairo size 1400,650 noenhanced\n";
  s += "set output '" + out_png + "'\n";
  s += "set logscale x\nset grid\n";
  s += "set multiplot layout 1,2 title \"" + title + "\"\n";
  s += "set xlabel 'cache capacity (entries)'\nset ylabel 'p99 RSS at its peak / memory budget'\n";
  s += "set yrange [0:*]\nset key inside top left font ',9'\n";
  auto plot = [&](int column, bool budget) {
    std::string p = budget ? "plot 1 with lines dt 2 lw 2 lc rgb 'red' title 'budget'" : "plot ";
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (i || budget) p += ", ";
      p += "'" + data + "' index " + std::to_string(i) + " using 1:" + std::to_string(column) +
           " with linespoints lw 2 lc " + std::to_string(i + 1) + " title '" + series[i] + "'";
    }
    return p + "\n";
  };
  s += plot(2, true);
  s += "unset key\nset ylabel 'hit rate after the rollout'\nset yrange [0:1]\n" + plot(3, false);
  s += "unset multiplot\n";
  return run_gnuplot(s, out_png + ".gp", why);
}

}  // namespace dnsarena::sim::fleet

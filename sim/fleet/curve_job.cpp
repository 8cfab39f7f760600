// SPDX-License-Identifier: GPL-3.0-or-later
#include "curve_job.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <stdexcept>

#include "curve_store.hpp"

namespace dnsarena::sim::fleet {

namespace {

class LocalCurveRunner final : public CurveRunner {
public:
  std::vector<OccupancyCurve> run(const FleetConfig& fleet, const std::vector<CurveJob>& jobs) override {
    std::vector<OccupancyCurve> out(jobs.size());
    tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t i) { out[i] = run_curve_job(fleet, jobs[i]); });
    return out;
  }
};

LocalCurveRunner g_local_curve_runner;
CurveRunner* g_current_curve_runner = &g_local_curve_runner;

}  // namespace

CurveJob make_curve_job(const FleetConfig& fleet, std::size_t dc, std::uint64_t capacity, double rate_qps,
                        std::uint32_t outage_minutes) {
  CurveJob j;
  j.fleet = fleet.name;
  j.datacenter = fleet.datacenters.at(dc).name;
  j.capacity = capacity;
  j.rate_qps = rate_qps;
  j.seed = curve_seed(fleet, dc);
  j.sample_entries = fleet.sample_entries;
  j.max_sample_rate = fleet.max_sample_rate;
  j.max_days = fleet.curve_max_days;
  j.stale_max_age_s = fleet.datacenters[dc].stale_max_age_s;
  j.prefetch_percent = fleet.datacenters[dc].prefetch_percent;
  j.outage_minutes = outage_minutes;
  return j;
}

OccupancyCurve run_curve_job(const FleetConfig& fleet, const CurveJob& job) {
  if (job.fleet != fleet.name)
    throw std::runtime_error("curve job for fleet '" + job.fleet + "' but this process loaded fleet '" + fleet.name +
                             "' (every rank must read the same fleet file)");
  const auto it = std::find_if(fleet.datacenters.begin(), fleet.datacenters.end(),
                               [&](const Datacenter& d) { return d.name == job.datacenter; });
  if (it == fleet.datacenters.end())
    throw std::runtime_error("curve job for datacenter '" + job.datacenter + "', which fleet '" + fleet.name +
                             "' (" + fleet.file + ") does not have");
  CurveRequest req;
  req.traffic = &it->traffic;
  req.capacity = job.capacity;
  req.rate_qps = job.rate_qps;
  req.sample_entries = job.sample_entries;
  req.max_sample_rate = job.max_sample_rate;
  req.max_days = job.max_days;
  req.seed = job.seed;
  req.stale_max_age_s = job.stale_max_age_s;
  req.prefetch_percent = job.prefetch_percent;
  req.outage_minutes = job.outage_minutes;
  req.outage_start_minute = job.outage_start_minute;
  return compute_curve(req);
}

double estimated_cost(const CurveJob& job) {
  const double r = std::min(job.max_sample_rate, job.sample_entries / std::max(1.0, static_cast<double>(job.capacity)));
  return job.rate_qps * r * job.max_days;
}

CurveRunner& curve_runner() { return *g_current_curve_runner; }

ScopedCurveRunner::ScopedCurveRunner(CurveRunner& runner) : previous_(g_current_curve_runner) { g_current_curve_runner = &runner; }
ScopedCurveRunner::~ScopedCurveRunner() { g_current_curve_runner = previous_; }

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
#include "curve_store.hpp"

#include <cmath>
#include <stdexcept>

#include "curve_job.hpp"

namespace dnsarena::sim::fleet {

int rate_bucket(double median, double rate) { return static_cast<int>(std::lround(kBucketsPerOctave * std::log2(rate / median))); }
std::uint64_t curve_seed(const FleetConfig& fleet, std::size_t dc) { return fleet.seed * 1000003 + dc; }
double bucket_rate(double median, int bucket) { return median * std::exp2(bucket / kBucketsPerOctave); }

OccupancyCurve CurveStore::compute_at(std::size_t dc, std::uint64_t capacity, double rate) const {
  return compute_at(dc, capacity, rate, outage_minutes_.at(dc));
}

OccupancyCurve CurveStore::compute_at(std::size_t dc, std::uint64_t capacity, double rate,
                                      std::uint32_t outage_minutes) const {
  return run_curve_job(fleet_, make_curve_job(fleet_, dc, capacity, rate, outage_minutes));
}

void CurveStore::set_outage_minutes(std::size_t dc, std::uint32_t minutes) {
  for (const auto& [k, c] : curves_)
    if (k.dc == dc) throw std::logic_error("set_outage_minutes after a curve of the datacenter was computed");
  outage_minutes_.at(dc) = minutes;
}

void CurveStore::compute(const std::vector<CurveKey>& keys) {
  std::vector<CurveKey> todo;
  for (const auto& k : keys)
    if (!curves_.count(k)) {
      curves_[k] = nullptr;
      todo.push_back(k);
    }
  // The runner in use: this process (oneTBB), or MPI ranks (distributed_run.hpp).
  std::vector<CurveJob> jobs;
  for (const CurveKey& k : todo)
    jobs.push_back(make_curve_job(fleet_, k.dc, k.capacity, bucket_rate(fleet_.datacenters[k.dc].rate_median_qps, k.bucket),
                                  outage_minutes_[k.dc]));
  std::vector<OccupancyCurve> out = curve_runner().run(fleet_, jobs);
  for (std::size_t i = 0; i < todo.size(); ++i) curves_[todo[i]] = std::make_shared<OccupancyCurve>(std::move(out[i]));
}

const OccupancyCurve& CurveStore::get(const CurveKey& key) const {
  auto it = curves_.find(key);
  if (it == curves_.end() || !it->second) throw std::logic_error("curve not computed");
  return *it->second;
}

std::uint64_t CurveStore::sampled_requests() const {
  std::uint64_t n = 0;
  for (const auto& [k, c] : curves_) n += c ? c->sampled_requests : 0;
  return n;
}

double CurveStore::cache_seconds() const {
  double s = 0;
  for (const auto& [k, c] : curves_) s += c ? c->run_seconds : 0;
  return s;
}

double CurveStore::memory_accesses() const {
  double n = 0;
  for (const auto& [k, c] : curves_) n += c ? c->memory_accesses : 0;
  return n;
}

double CurveStore::request_weighted_segment_bytes() const {
  double bytes = 0, requests = 0;
  for (const auto& [k, c] : curves_)
    if (c) bytes += static_cast<double>(c->segment_bytes) * static_cast<double>(c->sampled_requests),
           requests += static_cast<double>(c->sampled_requests);
  return requests > 0 ? bytes / requests : 0;
}

}  // namespace dnsarena::sim::fleet

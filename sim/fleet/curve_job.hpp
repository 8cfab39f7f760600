// SPDX-License-Identifier: GPL-3.0-or-later
// One cold-start curve to compute, named so that any process holding the same fleet file
// can compute it (an MPI rank on another machine), and the runner that computes a batch.
//
// A CurveJob names its datacenter (not its index: `sim sweep` runs one-datacenter copies
// of the fleet, whose indexes differ from the file's) and carries every other input of
// compute_curve (cache_curve.hpp) by value. The same job gives the same curve, bit for
// bit, in any process and thread: compute_curve is deterministic in its request.
//
// CurveRunner: what CurveStore::compute hands a batch to. The default runs the batch in
// this process (oneTBB, one curve per task); distributed_run.hpp installs one that
// spreads it over MPI ranks for the duration of a command (ScopedCurveRunner).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cache_curve.hpp"
#include "fleet_config.hpp"

namespace dnsarena::sim::fleet {

struct CurveJob {
  std::string fleet;       // fleet name (a rank checks it holds the same fleet)
  std::string datacenter;  // datacenter name within the fleet
  std::uint64_t capacity = 0;
  double rate_qps = 0;
  std::uint64_t seed = 0;
  std::uint32_t sample_entries = 0;
  double max_sample_rate = 1.0;
  std::uint32_t max_days = 0;
  std::uint32_t stale_max_age_s = 0;   // the datacenter's
  double prefetch_percent = 0;         // the datacenter's
  std::uint32_t outage_minutes = 0;    // 0: no outage (CurveRequest)
  std::uint32_t outage_start_minute = 0;
};

// The job for datacenter `dc` of `fleet` (seed: curve_seed(fleet, dc); stale window and
// prefetch: the datacenter's), with an outage of `outage_minutes` after the curve's end.
CurveJob make_curve_job(const FleetConfig& fleet, std::size_t dc, std::uint64_t capacity, double rate_qps,
                        std::uint32_t outage_minutes = 0);
// Computes the job's curve from `fleet`'s datacenter of that name; throws
// std::runtime_error when the fleet has no such datacenter or another name.
OccupancyCurve run_curve_job(const FleetConfig& fleet, const CurveJob& job);
// Relative cost, for scheduling the longest first: sampled requests over the longest
// curve, rate x R x max_days (R = min(max_sample_rate, sample_entries / capacity)).
double estimated_cost(const CurveJob& job);

class CurveRunner {
public:
  virtual ~CurveRunner() = default;
  // The curves of `jobs`, in order.
  virtual std::vector<OccupancyCurve> run(const FleetConfig& fleet, const std::vector<CurveJob>& jobs) = 0;
};

// The runner in use: the innermost ScopedCurveRunner, else the in-process one.
CurveRunner& curve_runner();

// Installs `runner` until destroyed (then the previous one is back). Not thread-safe:
// install and remove from the thread that runs the command.
class ScopedCurveRunner {
public:
  explicit ScopedCurveRunner(CurveRunner& runner);
  ~ScopedCurveRunner();
  ScopedCurveRunner(const ScopedCurveRunner&) = delete;
  ScopedCurveRunner& operator=(const ScopedCurveRunner&) = delete;

private:
  CurveRunner* previous_;
};

}  // namespace dnsarena::sim::fleet

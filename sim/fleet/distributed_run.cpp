// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "curve_codec.hpp"
#include "curve_job.hpp"
#include "fleet_config.hpp"
#include "fleet_walk.hpp"
#include "fleet_walk_codec.hpp"
#include "mpi_session.hpp"
#include "mpi_task_farm.hpp"

namespace dnsarena::sim::fleet {

namespace {

// A task's first byte says what it is.
constexpr char kCurveTask = 'c', kSpanTask = 's';

// Tasks done per rank by one runner (the farm counts all of them).
class PerRank {
public:
  explicit PerRank(const MpiTaskFarm& farm) : farm_(farm), done_(farm.done_per_rank().size(), 0) {}
  template <class F>
  void count(F&& run) {
    const std::vector<std::size_t> before = farm_.done_per_rank();
    run();
    for (std::size_t r = 0; r < done_.size(); ++r) done_[r] += farm_.done_per_rank()[r] - before[r];
  }
  const std::vector<std::size_t>& done() const { return done_; }

private:
  const MpiTaskFarm& farm_;
  std::vector<std::size_t> done_;
};

// A span task (kind byte, SpanTask) -> its rows as bytes.
std::string run_span_task(const FleetWalk& walk, const std::string& task) {
  const SpanTask span = decode_span(task.substr(1));
  if (span.end > walk.steps) throw std::runtime_error("a fleet span past the walk's steps");
  std::vector<RolloutStep> rows(static_cast<std::size_t>(span.end - span.first));
  walk_span(walk, span.first, span.end, rows.data());
  return encode_steps(rows.data(), rows.size());
}

// Rank 0's runner: each batch through the task farm.
class MpiCurveRunner final : public CurveRunner {
public:
  explicit MpiCurveRunner(MpiTaskFarm& farm) : farm_(farm), per_rank_(farm) {}
  std::vector<OccupancyCurve> run(const FleetConfig& fleet, const std::vector<CurveJob>& jobs) override {
    std::vector<std::string> tasks;
    std::vector<double> costs;
    for (const CurveJob& j : jobs) tasks.push_back(kCurveTask + encode_job(j)), costs.push_back(estimated_cost(j));
    std::vector<std::string> out;
    per_rank_.count([&] {
      out = farm_.run(tasks, costs,
                      [&fleet](const std::string& t) { return encode_curve(run_curve_job(fleet, decode_job(t.substr(1)))); });
    });
    std::vector<OccupancyCurve> curves;
    curves.reserve(out.size());
    for (const std::string& c : out) curves.push_back(decode_curve(c));
    return curves;
  }
  const PerRank& per_rank() const { return per_rank_; }

private:
  MpiTaskFarm& farm_;
  PerRank per_rank_;
};

// Rank 0's span runner: the walk to every rank, then the spans through the task farm.
class MpiSpanRunner final : public SpanRunner {
public:
  explicit MpiSpanRunner(MpiTaskFarm& farm) : farm_(farm), per_rank_(farm) {}
  void run(const FleetWalk& walk, std::vector<RolloutStep>& steps) override {
    const auto start = std::chrono::steady_clock::now();
    const std::string bytes = encode_walk(walk);
    farm_.broadcast(bytes);
    walk_bytes_ = std::max(walk_bytes_, bytes.size());
    send_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::int64_t spans = span_count(walk.steps);
    std::vector<std::string> tasks;
    std::vector<double> costs;
    for (std::int64_t k = 0; k < spans; ++k) {
      const SpanTask span{span_first(walk.steps, k), span_first(walk.steps, k + 1)};
      tasks.push_back(kSpanTask + encode_span(span));
      costs.push_back(static_cast<double>(span.end - span.first));
    }
    std::vector<std::string> out;
    per_rank_.count([&] {
      out = farm_.run(tasks, costs, [&walk](const std::string& t) { return run_span_task(walk, t); });
    });
    steps.resize(static_cast<std::size_t>(walk.steps));
    for (std::int64_t k = 0; k < spans; ++k) {
      const std::vector<RolloutStep> rows = decode_steps(out[static_cast<std::size_t>(k)]);
      const std::int64_t first = span_first(walk.steps, k);
      if (static_cast<std::int64_t>(rows.size()) != span_first(walk.steps, k + 1) - first)
        throw std::runtime_error("fleet span " + std::to_string(k) + ": a rank sent " + std::to_string(rows.size()) + " rows");
      std::copy(rows.begin(), rows.end(), steps.begin() + first);
    }
  }
  const PerRank& per_rank() const { return per_rank_; }
  std::size_t walk_bytes() const { return walk_bytes_; }  // the largest walk sent
  double send_s() const { return send_s_; }               // encoding and sending walks, all runs

private:
  MpiTaskFarm& farm_;
  PerRank per_rank_;
  std::size_t walk_bytes_ = 0;
  double send_s_ = 0;
};

void report(const MpiTaskFarm& farm, const PerRank& curves, const MpiSpanRunner& spans, int ranks) {
  std::fprintf(stderr, "mpi: %d ranks; curves computed per rank (threads):", ranks);
  for (int r = 0; r < ranks; ++r)
    std::fprintf(stderr, " %d:%zu (%u)", r, curves.done()[static_cast<std::size_t>(r)], farm.threads_of(r));
  std::fprintf(stderr, "; fleet spans walked per rank:");
  for (int r = 0; r < ranks; ++r) std::fprintf(stderr, " %d:%zu", r, spans.per_rank().done()[static_cast<std::size_t>(r)]);
  std::fprintf(stderr, " (fleet walk %.1f MB to each rank, %.2f s to encode and send)\n", spans.walk_bytes() / 1e6,
               spans.send_s());
}

// Failpoint for tests: DNSARENA_MPI_ABORT_SPAN_RANK=N makes rank N abort() on its first span.
void span_failpoint(int rank) {
  const char* v = std::getenv("DNSARENA_MPI_ABORT_SPAN_RANK");
  if (!v || !*v || std::atoi(v) != rank) return;
  std::fprintf(stderr, "dnsarena: rank %d: DNSARENA_MPI_ABORT_SPAN_RANK=%d: aborting on purpose (failpoint)\n", rank, rank);
  std::abort();
}

// A worker rank: curves from its copy of the fleet file, spans from the walk rank 0 sent.
void serve(int rank, const std::string& fleet_path) {
  std::once_flag loaded;
  std::optional<FleetConfig> fleet;
  std::shared_ptr<const FleetWalk> walk;  // replaced between runs only (mpi_task_farm.hpp)
  serve_tasks(
      rank,
      [&](const std::string& task) -> std::string {
        if (task.empty()) throw std::runtime_error("empty task");
        if (task[0] == kSpanTask) {
          span_failpoint(rank);
          if (!walk) throw std::runtime_error("a fleet span before the fleet walk");
          return run_span_task(*walk, task);
        }
        if (task[0] != kCurveTask) throw std::runtime_error("unknown task kind");
        std::call_once(loaded, [&] { fleet = load_fleet(fleet_path); });
        return encode_curve(run_curve_job(*fleet, decode_job(task.substr(1))));
      },
      [&](const std::string& bytes) { walk = std::make_shared<const FleetWalk>(decode_walk(bytes)); });
}

}  // namespace

void run_distributed(const std::string& fleet_path, const std::function<void()>& root) {
  if (launched_ranks() <= 1) {
    root();
    return;
  }
  MpiSession session;
  if (session.rank() != 0) {
    serve(session.rank(), fleet_path);
    return;
  }
  MpiTaskFarm farm(session.size());
  MpiCurveRunner curves(farm);
  MpiSpanRunner spans(farm);
  ScopedCurveRunner curves_installed(curves);
  ScopedSpanRunner spans_installed(spans);
  try {
    root();
  } catch (...) {
    farm.stop();
    throw;
  }
  farm.stop();
  report(farm, curves.per_rank(), spans, session.size());
}

}  // namespace dnsarena::sim::fleet

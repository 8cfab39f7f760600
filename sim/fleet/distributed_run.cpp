#include "distributed_run.hpp"

#include <cstdio>
#include <mutex>
#include <optional>

#include "curve_codec.hpp"
#include "curve_job.hpp"
#include "fleet_config.hpp"
#include "mpi_session.hpp"
#include "mpi_task_farm.hpp"

namespace dnsarena::sim::fleet {

namespace {

// Rank 0's runner: each batch through the task farm.
class MpiCurveRunner final : public CurveRunner {
public:
  explicit MpiCurveRunner(MpiTaskFarm& farm) : farm_(farm) {}
  std::vector<OccupancyCurve> run(const FleetConfig& fleet, const std::vector<CurveJob>& jobs) override {
    std::vector<std::string> tasks;
    std::vector<double> costs;
    for (const CurveJob& j : jobs) tasks.push_back(encode_job(j)), costs.push_back(estimated_cost(j));
    const std::vector<std::string> out =
        farm_.run(tasks, costs, [&fleet](const std::string& t) { return encode_curve(run_curve_job(fleet, decode_job(t))); });
    std::vector<OccupancyCurve> curves;
    curves.reserve(out.size());
    for (const std::string& c : out) curves.push_back(decode_curve(c));
    return curves;
  }

private:
  MpiTaskFarm& farm_;
};

void report(const MpiTaskFarm& farm, int ranks) {
  std::fprintf(stderr, "mpi: %d ranks; curves computed per rank (threads):", ranks);
  for (int r = 0; r < ranks; ++r)
    std::fprintf(stderr, " %d:%zu (%u)", r, farm.done_per_rank()[static_cast<std::size_t>(r)], farm.threads_of(r));
  std::fprintf(stderr, "\n");
}

}  // namespace

void run_distributed(const std::string& fleet_path, const std::function<void()>& root) {
  if (launched_ranks() <= 1) {
    root();
    return;
  }
  MpiSession session;
  if (session.rank() != 0) {
    std::once_flag loaded;
    std::optional<FleetConfig> fleet;
    serve_tasks(session.rank(), [&](const std::string& task) {
      std::call_once(loaded, [&] { fleet = load_fleet(fleet_path); });
      return encode_curve(run_curve_job(*fleet, decode_job(task)));
    });
    return;
  }
  MpiTaskFarm farm(session.size());
  MpiCurveRunner runner(farm);
  ScopedCurveRunner installed(runner);
  try {
    root();
  } catch (...) {
    farm.stop();
    throw;
  }
  farm.stop();
  report(farm, session.size());
}

}  // namespace dnsarena::sim::fleet

// How `sim rollout`, `sim tune` and `sim sweep` run under mpirun.
//
//   mpirun -np N dnsarena sim rollout --fleet F --plan P ...
//
// Every rank parses the same command line. Rank 0 runs the command as a single process
// would, except that each batch of curves (CurveStore::compute) goes to an MPI task
// farm (mpi_task_farm.hpp): rank 0's threads and every other rank compute the curves,
// longest first, and the curves come back to rank 0 as bytes (curve_codec.hpp). The other
// ranks load the fleet file (the same path: a shared or copied directory on every
// machine) when their first curve arrives, compute curves until rank 0 is done, and
// print nothing. A curve is a function of its job, so the output files are
// byte-identical to a single process's.
//
// Not started by mpirun (or -np 1): `root` runs here with the in-process runner; MPI is
// never initialised, so a build with MPI runs without an MPI runtime.
#pragma once
#include <functional>
#include <string>

namespace dnsarena::sim::fleet {

void run_distributed(const std::string& fleet_path, const std::function<void()>& root);

}  // namespace dnsarena::sim::fleet

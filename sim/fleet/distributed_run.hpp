// SPDX-License-Identifier: GPL-3.0-or-later
// How `sim rollout`, `sim tune` and `sim sweep` run under mpirun.
//
//   mpirun -np N dnsarena-lab sim rollout --fleet F --plan P ...
//
// Every rank parses the same command line. Rank 0 runs the command as a single process
// would, except that each batch of curves (CurveStore::compute) goes to an MPI task
// farm (mpi_task_farm.hpp): rank 0's threads and every other rank compute the curves,
// longest first, and the curves come back to rank 0 as bytes (curve_codec.hpp). The other
// ranks load the fleet file (the same path: a shared or copied directory on every
// machine) when their first curve arrives, compute curves until rank 0 is done, and
// print nothing. The fleet steps of a rollout go the same way (fleet_walk.hpp): rank 0
// sends every rank the walk's input once (fleet_walk_codec.hpp), then its 32 spans as
// tasks, and puts the rows back in order. A curve is a function of its job and a span's
// rows of the walk, so the output files are byte-identical to a single process's.
// Rank 0 prints the work per rank on stderr.
//
// Not started by mpirun (or -np 1): `root` runs here with the in-process runner; MPI is
// never initialised, so a build with MPI runs without an MPI runtime.
#pragma once
#include <functional>
#include <string>

namespace dnsarena::sim::fleet {

void run_distributed(const std::string& fleet_path, const std::function<void()>& root);

}  // namespace dnsarena::sim::fleet

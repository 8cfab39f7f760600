// SPDX-License-Identifier: GPL-3.0-or-later
// Whether this process was started by mpirun, and MPI's lifetime when it was.
//
// The one dnsarena binary serves both cases: run directly, it never calls MPI (libmpi is
// linked but not initialised, so no MPI runtime is needed at run time); started by
// Open MPI's mpirun (which sets OMPI_COMM_WORLD_SIZE in each rank's environment) with
// more than one rank, it initialises MPI (MPI_THREAD_FUNNELED: only the thread that
// called MPI_Init_thread makes MPI calls) and finalises it when the session ends.
// `mpirun -np 1` runs like a direct start.
#pragma once
#include <memory>

namespace dnsarena::sim::fleet {

// Ranks in the job that started this process (OMPI_COMM_WORLD_SIZE, else PMI_SIZE), 1
// when not started by mpirun. Throws std::runtime_error on a malformed value.
int launched_ranks();
// Ranks of this job on this machine (OMPI_COMM_WORLD_LOCAL_SIZE), 1 when unknown.
int launched_local_ranks();
// Threads a rank computes with: the machine's hardware threads shared among its ranks.
unsigned threads_per_rank();
// True when this build has MPI (DNSARENA_HAVE_MPI).
bool mpi_built();

class MpiSession {
public:
  // REQUIRES: mpi_built(). Initialises MPI; throws when it cannot.
  MpiSession();
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  int rank_ = 0, size_ = 1;
};

}  // namespace dnsarena::sim::fleet

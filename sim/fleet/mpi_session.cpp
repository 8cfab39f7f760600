// SPDX-License-Identifier: GPL-3.0-or-later
#include "mpi_session.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#ifdef DNSARENA_HAVE_MPI
#include <mpi.h>
#endif

namespace dnsarena::sim::fleet {

namespace {

int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end || n < 1 || n > 1'000'000) throw std::runtime_error(std::string(name) + "='" + v + "': not a rank count");
  return static_cast<int>(n);
}

}  // namespace

int launched_ranks() {
  if (int n = env_count("OMPI_COMM_WORLD_SIZE")) return n;
  if (int n = env_count("PMI_SIZE")) return n;
  return 1;
}

int launched_local_ranks() { return std::max(1, env_count("OMPI_COMM_WORLD_LOCAL_SIZE")); }

unsigned threads_per_rank() {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, hw / static_cast<unsigned>(launched_local_ranks()));
}

#ifdef DNSARENA_HAVE_MPI

bool mpi_built() { return true; }

MpiSession::MpiSession() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("this MPI library does not support MPI_THREAD_FUNNELED");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

#else

bool mpi_built() { return false; }

MpiSession::MpiSession() {
  throw std::runtime_error("started by mpirun with " + std::to_string(launched_ranks()) +
                           " ranks, but this dnsarena was built without MPI (install libopenmpi-dev, "
                           "rebuild; or run it without mpirun)");
}

MpiSession::~MpiSession() = default;

#endif

}  // namespace dnsarena::sim::fleet

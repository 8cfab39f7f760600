// SPDX-License-Identifier: GPL-3.0-or-later
// A task farm over MPI ranks: rank 0 hands out independent tasks (bytes in, bytes out),
// the longest first, to its own threads and to the other ranks as they free up; the other
// ranks serve tasks until rank 0 stops them. Used for curve runs and fleet spans
// (distributed_run.hpp).
//
// Protocol (MPI_COMM_WORLD; every message to or from rank 0):
//   worker -> 0   kTagHello   u32 threads            once, when the worker starts serving
//   0 -> worker   kTagTask    u64 id, task bytes     while the worker has < threads tasks
//   worker -> 0   kTagResult  u64 id, result bytes   one per task
//   0 -> worker   kTagContext bytes                  any time between batches: input shared
//                                                    by the next tasks (the fleet walk)
//   0 -> worker   kTagStop    (empty)                once, after the last result
// Scheduling: dynamic, longest first (tasks sorted by estimated cost, each free thread of
// any rank takes the next; the other ranks' slots are filled before this rank's threads
// start, so every rank gets work while there are tasks enough): a static split would need
// exact costs, and curve costs vary 10x with rate and sampling; the messages are few (one
// per curve or fleet span) and small next to the task's seconds of work.
// Polling: rank 0's MPI thread and the workers' MPI threads test for messages every
// 0.2 ms / 0.5 ms and sleep between (a blocking receive in Open MPI spins a core, which
// the curve threads need).
// Failure: a worker whose task throws prints the error and calls MPI_Abort (mpirun ends
// every rank). A rank that dies (a signal, kill -9) is seen by mpirun, which prints
// "mpirun noticed that process rank N ... exited on signal S" and ends the others: the
// command fails, nothing waits forever. Failpoint for tests: DNSARENA_MPI_ABORT_RANK=N
// makes rank N abort() on receiving its first task.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace dnsarena::sim::fleet {

using TaskHandler = std::function<std::string(const std::string&)>;
// Takes a context on the worker's MPI thread, before any task sent after it.
using ContextHandler = std::function<void(const std::string&)>;

// Rank 0's side. REQUIRES: MPI initialised (MpiSession), called on the thread that
// initialised it.
class MpiTaskFarm {
public:
  explicit MpiTaskFarm(int ranks);
  // Results of `tasks`, in order; `local` runs tasks on this rank's threads.
  // Rethrows the first exception of a local task (after the remote tasks in flight end).
  std::vector<std::string> run(const std::vector<std::string>& tasks, const std::vector<double>& costs,
                               const TaskHandler& local);
  // Sends `bytes` to every worker's ContextHandler (between runs; messages from rank 0
  // arrive in order, so before the next run's tasks).
  void broadcast(const std::string& bytes);
  // Tells every worker to return from serve_tasks. Call once, at the end.
  void stop();
  // Tasks done per rank so far.
  const std::vector<std::size_t>& done_per_rank() const { return done_; }
  unsigned threads_of(int rank) const { return slots_.at(static_cast<std::size_t>(rank)); }

private:
  void await_hellos();
  int ranks_;
  bool hellos_ = false, stopped_ = false;
  std::vector<unsigned> slots_;
  std::vector<std::size_t> done_;
};

// A worker rank's side: serves tasks with `handler` on threads_per_rank() threads until
// rank 0 says stop; contexts go to `context`.
void serve_tasks(int rank, const TaskHandler& handler, const ContextHandler& context);

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
#include "mpi_task_farm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <utility>

#include "mpi_session.hpp"

#ifdef DNSARENA_HAVE_MPI
#include <mpi.h>
#endif

namespace dnsarena::sim::fleet {

#ifdef DNSARENA_HAVE_MPI

namespace {

constexpr int kTagHello = 1, kTagTask = 2, kTagResult = 3, kTagStop = 4, kTagContext = 5;

std::string with_id(std::uint64_t id, const std::string& payload) {
  std::string m(sizeof id, '\0');
  std::memcpy(m.data(), &id, sizeof id);
  return m + payload;
}

std::uint64_t id_of(const std::string& m) {
  std::uint64_t id = 0;
  if (m.size() < sizeof id) throw std::runtime_error("MPI message shorter than its id");
  std::memcpy(&id, m.data(), sizeof id);
  return id;
}

void send_bytes(const std::string& m, int dest, int tag) {
  if (m.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("MPI message of " + std::to_string(m.size()) + " bytes: over the 2 GiB a message can hold");
  MPI_Send(m.data(), static_cast<int>(m.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

std::string receive_bytes(const MPI_Status& probed) {
  int count = 0;
  MPI_Get_count(&probed, MPI_BYTE, &count);
  std::string m(static_cast<std::size_t>(count), '\0');
  MPI_Recv(m.data(), count, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

int failpoint_rank() {
  const char* v = std::getenv("DNSARENA_MPI_ABORT_RANK");
  return v && *v ? std::atoi(v) : -1;
}

}  // namespace

MpiTaskFarm::MpiTaskFarm(int ranks) : ranks_(ranks), slots_(static_cast<std::size_t>(ranks), 0), done_(slots_.size(), 0) {
  slots_[0] = threads_per_rank();
}

void MpiTaskFarm::await_hellos() {
  if (hellos_) return;
  for (int r = 1; r < ranks_; ++r)
    MPI_Recv(&slots_[static_cast<std::size_t>(r)], 1, MPI_UNSIGNED, r, kTagHello, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  hellos_ = true;
}

std::vector<std::string> MpiTaskFarm::run(const std::vector<std::string>& tasks, const std::vector<double>& costs,
                                          const TaskHandler& local) {
  const std::size_t n = tasks.size();
  std::vector<std::string> results(n);
  if (n == 0) return results;
  await_hellos();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });

  std::atomic<std::size_t> next{0};
  std::atomic<unsigned> local_running{slots_[0]};
  std::atomic<std::size_t> local_count{0};
  std::exception_ptr local_error;
  std::mutex error_mutex;
  std::vector<unsigned> outstanding(static_cast<std::size_t>(ranks_), 0);
  std::size_t in_flight = 0;
  // Every free slot of the other ranks takes the next task.
  const auto fill = [&] {
    for (int r = 1; r < ranks_; ++r)
      while (outstanding[static_cast<std::size_t>(r)] < slots_[static_cast<std::size_t>(r)]) {
        const std::size_t i = next.fetch_add(1);
        if (i >= n) break;
        send_bytes(with_id(order[i], tasks[order[i]]), r, kTagTask);
        ++outstanding[static_cast<std::size_t>(r)], ++in_flight;
      }
  };
  fill();  // before this rank's threads start: every rank gets work while there is enough
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < slots_[0]; ++t)
    threads.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) {
        try {
          results[order[i]] = local(tasks[order[i]]);
          local_count.fetch_add(1);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!local_error) local_error = std::current_exception();
          next.store(n);
          break;
        }
      }
      local_running.fetch_sub(1);
    });

  for (;;) {
    fill();
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      std::string m = receive_bytes(status);
      const std::uint64_t id = id_of(m);
      if (id >= n) throw std::runtime_error("rank " + std::to_string(status.MPI_SOURCE) + " sent a result for no task");
      results[id] = m.substr(sizeof id);
      --outstanding[static_cast<std::size_t>(status.MPI_SOURCE)], --in_flight;
      ++done_[static_cast<std::size_t>(status.MPI_SOURCE)];
      continue;
    }
    if (local_running.load() == 0 && in_flight == 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (auto& t : threads) t.join();
  if (local_error) std::rethrow_exception(local_error);
  done_[0] += local_count.load();
  return results;
}

void MpiTaskFarm::broadcast(const std::string& bytes) {
  await_hellos();
  for (int r = 1; r < ranks_; ++r) send_bytes(bytes, r, kTagContext);
}

void MpiTaskFarm::stop() {
  if (stopped_) return;
  stopped_ = true;
  await_hellos();
  for (int r = 1; r < ranks_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kTagStop, MPI_COMM_WORLD);
}

void serve_tasks(int rank, const TaskHandler& handler, const ContextHandler& context) {
  unsigned threads = threads_per_rank();
  MPI_Send(&threads, 1, MPI_UNSIGNED, 0, kTagHello, MPI_COMM_WORLD);
  const bool fail_here = failpoint_rank() == rank;

  std::mutex m;
  std::condition_variable cv;
  std::deque<std::pair<std::uint64_t, std::string>> todo, done;
  std::string error;
  bool stopping = false;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (;;) {
        std::pair<std::uint64_t, std::string> task;
        {
          std::unique_lock lock(m);
          cv.wait(lock, [&] { return stopping || !todo.empty(); });
          if (todo.empty()) return;
          task = std::move(todo.front());
          todo.pop_front();
        }
        std::string result, what;
        try {
          result = handler(task.second);
        } catch (const std::exception& e) {
          what = e.what();
        }
        std::lock_guard lock(m);
        if (!what.empty()) error = what;
        else done.emplace_back(task.first, std::move(result));
      }
    });

  for (;;) {
    bool busy = false;
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      busy = true;
      std::string msg = receive_bytes(status);
      if (status.MPI_TAG == kTagStop) break;
      if (status.MPI_TAG == kTagContext) {
        try {
          context(msg);  // no task is running: the previous run's results are all back
        } catch (const std::exception& e) {
          std::fprintf(stderr, "dnsarena: rank %d: error: %s\n", rank, e.what());
          std::fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, 2);
        }
        continue;
      }
      if (fail_here) {
        std::fprintf(stderr, "dnsarena: rank %d: DNSARENA_MPI_ABORT_RANK=%d: aborting on purpose (failpoint)\n", rank, rank);
        std::abort();
      }
      std::lock_guard lock(m);
      todo.emplace_back(id_of(msg), msg.substr(sizeof(std::uint64_t)));
      cv.notify_one();
    }
    std::deque<std::pair<std::uint64_t, std::string>> ready;
    std::string failed;
    {
      std::lock_guard lock(m);
      ready.swap(done);
      failed = error;
    }
    if (!failed.empty()) {
      std::fprintf(stderr, "dnsarena: rank %d: error: %s\n", rank, failed.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (auto& [id, result] : ready) send_bytes(with_id(id, result), 0, kTagResult), busy = true;
    if (!busy) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  {
    std::lock_guard lock(m);
    stopping = true;
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
}

#else

MpiTaskFarm::MpiTaskFarm(int) { throw std::logic_error("MpiTaskFarm: built without MPI"); }
std::vector<std::string> MpiTaskFarm::run(const std::vector<std::string>&, const std::vector<double>&, const TaskHandler&) {
  throw std::logic_error("MpiTaskFarm: built without MPI");
}
void MpiTaskFarm::broadcast(const std::string&) {}
void MpiTaskFarm::stop() {}
void MpiTaskFarm::await_hellos() {}
void serve_tasks(int, const TaskHandler&, const ContextHandler&) { throw std::logic_error("serve_tasks: built without MPI"); }

#endif

}  // namespace dnsarena::sim::fleet

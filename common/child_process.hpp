// SPDX-License-Identifier: GPL-3.0-or-later
// Child processes: the one implementation behind sim validate, bench serve and the
// multi-process tests.
//
// A ChildProcess is either a program (fork + exec of argv) or a function run in a forked
// copy of this process (the cache's multi-process tests). It always ends: the destructor
// sends SIGTERM, then SIGKILL after a grace period, and reaps it, so an exception or an
// early return cleans up without further code.
//
// Output: by default the child shares our stdout and stderr. With `log_path` both go to
// that file (appended, or truncated with `truncate_log`); with `capture_stdout` stdout goes
// to a pipe the parent reads (stdout_fd()), stderr stays ours.
//
// Example (sim validate):
//   ChildProcess serve({self_executable(), "serve", ...}, {.log_path = dir + "/serve.log",
//                                                          .die_with_parent = true});
//   while (!accepts_tcp(port)) { if (!serve.running()) throw ...(serve.log_tail()); ... }
//   ...                                    // ~ChildProcess: SIGTERM, SIGKILL after 5 s
#pragma once
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dnsarena::common {

struct SpawnOptions {
  std::string log_path;          // stdout and stderr to this file (created 0600); empty: ours
  bool truncate_log = false;     // truncate log_path instead of appending
  bool capture_stdout = false;   // stdout to a pipe read through stdout_fd() (not with log_path)
  bool search_path = false;      // execvp (argv[0] looked up on PATH) instead of execv
  bool die_with_parent = false;  // SIGTERM when this process dies, even by SIGKILL
  int cpu = -1;                  // >= 0: pinned to that CPU
};

class ChildProcess {
public:
  ChildProcess() = default;
  // fork + exec argv. Throws std::runtime_error when fork fails; an exec failure shows
  // as exit code 127.
  explicit ChildProcess(const std::vector<std::string>& argv, SpawnOptions options = {});
  // fork; the child runs `body` with an alarm of `alarm_seconds` (a deadlocked child dies
  // of SIGALRM instead of hanging its parent) and _exits with its result; an escaping
  // exception is printed and exits with `exception_code`. Fatal signals get their default
  // action in the child (not the parent's handlers).
  static ChildProcess run(const std::function<int()>& body, unsigned alarm_seconds = 60, int exception_code = 15);

  ~ChildProcess() { stop(); }
  ChildProcess(ChildProcess&& o) noexcept { *this = std::move(o); }
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False once the child has exited (it is then reaped; exit_status() says how).
  bool running();
  // Waits up to `limit` for the child to exit by itself; true when it did.
  bool wait_exit(std::chrono::milliseconds limit);
  // Blocks until the child exits; returns exit_code() (-1 when there is no child).
  int wait();
  // As wait(), and the child's resource usage (CPU time: user + system) from wait4.
  int wait(rusage& usage);
  // SIGTERM, then SIGKILL after `grace`; reaps. No-op when not running.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // SIGKILL at once; reaps.
  void kill();
  // Gives up ownership: the destructor will neither signal nor reap it.
  pid_t release();

  bool exited() const { return exited_; }
  // The raw waitpid status once exited.
  int wait_status() const { return status_; }
  // Exit code; 128 + signal for a child killed by a signal; -1 while running.
  int exit_code() const;
  // "exit code N" / "killed by signal N" / "running".
  std::string exit_status() const;

  const std::string& log_path() const { return log_path_; }
  // The last `bytes` of the log (for error messages).
  std::string log_tail(std::size_t bytes = 2000) const;
  // The read end of the stdout pipe (capture_stdout), owned by this object; -1 otherwise.
  int stdout_fd() const { return out_fd_; }

private:
  void close_stdout();
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  int out_fd_ = -1;
  std::string log_path_;
};

// Runs argv (execvp, no shell) to completion, up to `limit`, and returns its stdout;
// `status` gets the waitpid status (the child is killed after `limit`).
std::string run_and_capture(const std::vector<std::string>& argv, int& status,
                            std::chrono::milliseconds limit = std::chrono::seconds(20));

// The path of the running program (/proc/self/exe resolved). Throws when unreadable.
std::string self_executable();
// Direct children of `pid` (/proc/PID/task/PID/children).
std::vector<pid_t> child_pids(pid_t pid);
// True once something accepts a TCP connection on 127.0.0.1:port.
bool accepts_tcp(std::uint16_t port);

}  // namespace dnsarena::common

// Child processes of `dnsarena sim validate`, and what /proc says about their memory.
//
// Purpose: validate runs the real service (`dnsarena sim upstream`, `dnsarena serve`,
// `dnsarena sim load`) as children of itself, exec'ing /proc/self/exe, each with its
// output in a log file. A ChildProcess always ends: its destructor sends SIGTERM, then
// SIGKILL after a grace period, and reaps it; so an exception or an early return cleans
// up without further code. A child also gets SIGTERM when this process dies (even by
// SIGKILL: PR_SET_PDEATHSIG), so no service outlives a killed validate.
//
// Memory: Pss from /proc/PID/smaps_rollup (a shared page counts 1/N in each of the N
// processes mapping it, so the sum over a process tree counts the shared segment once),
// and a tmpfs object's resident bytes from its allocated blocks (pages of /dev/shm/NAME
// that have been written or read at least once, whether mapped now or not).
#pragma once
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::sim::fleet {

class ChildProcess {
public:
  ChildProcess() = default;
  // fork + execv(argv[0], argv) with stdout and stderr appended to `log_path`.
  // Throws std::runtime_error when fork fails (an exec failure shows as exit code 127).
  ChildProcess(const std::vector<std::string>& argv, std::string log_path);
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
  // SIGTERM, then SIGKILL after `grace`; reaps. No-op when not running.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // "exit code N" / "killed by signal N" / "running".
  std::string exit_status() const;
  int exit_code() const { return exited_ && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  const std::string& log_path() const { return log_path_; }
  // The last `bytes` of the log (for error messages).
  std::string log_tail(std::size_t bytes = 2000) const;

private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string log_path_;
};

// The path of the running program (/proc/self/exe resolved).
std::string self_executable();
// True once something accepts a TCP connection on 127.0.0.1:port.
bool accepts_tcp(std::uint16_t port);
// Direct children of `pid` (/proc/PID/task/PID/children).
std::vector<pid_t> child_pids(pid_t pid);
// Pss of `pid` in bytes (smaps_rollup), split as the kernel splits it: anonymous (heap,
// stacks), file-backed (the program and its libraries: shared with every other process
// mapping them, so a process's share moves when unrelated processes start or stop) and
// shmem (our segment). All 0 when the process is gone.
struct Pss {
  std::uint64_t total = 0, anon = 0, file = 0, shmem = 0;
  Pss& operator+=(const Pss& o) {
    total += o.total, anon += o.anon, file += o.file, shmem += o.shmem;
    return *this;
  }
};
Pss pss_of(pid_t pid);
// Allocated bytes of the tmpfs object behind a POSIX shared-memory name (st_blocks).
std::uint64_t shm_resident_bytes(const std::string& segment_name);

}  // namespace dnsarena::sim::fleet

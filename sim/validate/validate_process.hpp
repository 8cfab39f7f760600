// SPDX-License-Identifier: GPL-3.0-or-later
// What /proc says about the memory of `dnsarena-lab sim validate`'s child processes.
//
// validate runs the real service (`dnsarena-lab sim upstream`, `dnsarena serve`,
// `dnsarena-lab sim load`) as children of itself (common/child_process.hpp), exec'ing
// /proc/self/exe and the daemon beside it (common/sibling_program.hpp), each with its output in a log file and die_with_parent set, so no service outlives a
// killed validate.
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

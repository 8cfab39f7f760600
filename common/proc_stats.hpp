// SPDX-License-Identifier: GPL-3.0-or-later
// Figures of a running process read from /proc, for the benchmarks (bench serve, bench
// attack) and the hostile-network tests. Each returns 0 when the process or the field is
// gone (a child that just exited), never throws.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <string>

namespace dnsarena::common {

// utime + stime in seconds (/proc/PID/stat fields 14 and 15).
double cpu_seconds(pid_t pid);
// Time on a CPU of every thread of the process so far, in nanoseconds (the first field of
// each /proc/PID/task/TID/schedstat): what cpu_seconds counts in 10 ms ticks.
std::uint64_t cpu_ns(pid_t pid);
// A "Key:   N kB" field of /proc/PID/status (VmRSS, RssAnon...) in KiB.
std::uint64_t status_kib(pid_t pid, const char* key);
// Open descriptors (entries of /proc/PID/fd).
unsigned open_fds(pid_t pid);
// The soft "Max open files" of /proc/PID/limits (UINT64_MAX when unlimited).
std::uint64_t nofile_soft_limit(pid_t pid);

// The mapping of this process that contains `addr`, from /proc/self/smaps: its size and
// how many of its resident bytes are mapped by huge pages (AnonHugePages + ShmemPmdMapped
// + FilePmdMapped). All zero when no mapping contains it.
struct MappingPages {
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  std::uint64_t huge = 0;
};
MappingPages mapping_pages(const void* addr);

// Why segments in /dev/shm cannot get 2 MiB pages here, or "" when they can. A segment's
// memory is reserved with posix_fallocate before it is mapped (segment.cpp: a full
// /dev/shm fails the create instead of a later SIGBUS), and fallocate has no mapping to
// carry MADV_HUGEPAGE: so only a tmpfs mounted with huge=within_size or huge=always gives
// segments huge pages (/dev/shm is mounted without: huge=never), unless
// /sys/kernel/mm/transparent_hugepage/shmem_enabled says "deny" (none anywhere) or
// "force" (everywhere); shmem_enabled's other words govern only the kernel's internal
// mount (SysV and anonymous shared memory), not /dev/shm.
// Neither shmem_enabled "advise" nor /dev/shm mounted huge=advise gives a segment huge
// pages (the fallocate'd pages are 4 KiB, whatever the mapping's advice); huge=within_size
// does (`dnsarena bench` prints segment_huge_page_share).
std::string shm_huge_pages_unavailable();
// The same from the texts: shmem_enabled's line and /proc/mounts' lines (of several
// mounts on /dev/shm the last, the one that hides the others, counts).
std::string shm_huge_pages_unavailable(const std::string& shmem_enabled, std::istream& mounts);

}  // namespace dnsarena::common

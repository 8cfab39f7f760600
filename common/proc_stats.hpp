// Figures of a running process read from /proc, for the benchmarks (bench serve, bench
// attack) and the hostile-network tests. Each returns 0 when the process or the field is
// gone (a child that just exited), never throws.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dnsarena::common {

// utime + stime in seconds (/proc/PID/stat fields 14 and 15).
double cpu_seconds(pid_t pid);
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

// Why segments in /dev/shm cannot get 2 MiB pages here, or "" when they can. A tmpfs
// gives huge pages only when mounted with huge=always, within_size or advise (/dev/shm is
// mounted without: huge=never), unless /sys/kernel/mm/transparent_hugepage/shmem_enabled
// says "deny" (none anywhere) or "force" (everywhere); shmem_enabled's other words govern
// only the kernel's internal mount (SysV and anonymous shared memory), not /dev/shm.
// NOTE: checked here: with shmem_enabled "advise" a MADV_HUGEPAGE'd /dev/shm mapping still
// had ShmemPmdMapped 0; after `mount -o remount,huge=advise /dev/shm`, 16 of 16 MiB.
std::string shm_huge_pages_unavailable();

}  // namespace dnsarena::common

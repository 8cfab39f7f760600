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

// The kernel's policy for huge pages of shared memory (/dev/shm segments): the bracketed
// word of /sys/kernel/mm/transparent_hugepage/shmem_enabled ("never", "advise", "always",
// "within_size", "deny", "force"), or "" when it cannot be read. Under "never" and
// "deny" a segment's MADV_HUGEPAGE has no effect and it lives on 4 KiB pages.
std::string shmem_huge_page_mode();
inline constexpr const char* kShmemHugePageFile = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

}  // namespace dnsarena::common

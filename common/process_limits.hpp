// SPDX-License-Identifier: GPL-3.0-or-later
// What a long-running command sets up for its own process: the stop signals it reacts to
// and the number of file descriptors it may open (serve's supervisor and workers, the
// synthetic upstream, the attack benchmark).
#pragma once
#include <sys/resource.h>

namespace dnsarena::common {

// SIGTERM and SIGINT call `handler` (which should only set a flag); SIGPIPE is ignored,
// so a peer that closes a socket mid-write gives EPIPE instead of killing the process.
void install_stop_signals(void (*handler)(int));

// What raise_nofile_soft_limit did.
struct NofileChange {
  rlim_t before = 0;  // soft limit found
  rlim_t after = 0;   // soft limit now
  rlim_t hard = 0;    // hard limit (RLIM_INFINITY when unlimited)
  bool failed = false;  // setrlimit refused (errno kept)
};

// Raises RLIMIT_NOFILE's soft limit to min(hard limit, want); never lowers it.
NofileChange raise_nofile_soft_limit(rlim_t want);

// RLIMIT_NOFILE's soft limit now; RLIM_INFINITY when unlimited or when getrlimit fails.
rlim_t nofile_soft_limit();

// Descriptors this process has open now: the entries of /proc/self/fd, the directory's
// own descriptor aside. 0 when /proc cannot be read.
unsigned count_open_descriptors();

}  // namespace dnsarena::common

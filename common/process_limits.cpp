// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/process_limits.hpp"

#include <dirent.h>
#include <signal.h>

#include <algorithm>

namespace dnsarena::common {

void install_stop_signals(void (*handler)(int)) {
  struct sigaction sa{};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

NofileChange raise_nofile_soft_limit(rlim_t want) {
  NofileChange change;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    change.failed = true;
    return change;
  }
  change.before = change.after = lim.rlim_cur;
  change.hard = lim.rlim_max;
  const rlim_t target = lim.rlim_max == RLIM_INFINITY ? want : std::min(lim.rlim_max, want);
  if (lim.rlim_cur >= target) return change;  // RLIM_INFINITY is the largest rlim_t
  lim.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) change.after = target;
  else change.failed = true;
  return change;
}

rlim_t nofile_soft_limit() {
  rlimit lim{};
  return ::getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : RLIM_INFINITY;
}

unsigned count_open_descriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return 0;
  unsigned n = 0;
  while (const dirent* e = ::readdir(dir))
    if (e->d_name[0] != '.') ++n;
  ::closedir(dir);
  return n > 0 ? n - 1 : 0;  // the directory stream's own descriptor
}

}  // namespace dnsarena::common

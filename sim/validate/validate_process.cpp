// SPDX-License-Identifier: GPL-3.0-or-later
#include "validate_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>


namespace dnsarena::sim::fleet {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Pss pss_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  Pss p;
  std::string key;
  std::uint64_t kb = 0;
  while (in >> key) {
    std::uint64_t* field = key == "Pss:"         ? &p.total
                           : key == "Pss_Anon:"  ? &p.anon
                           : key == "Pss_File:"  ? &p.file
                           : key == "Pss_Shmem:" ? &p.shmem
                                                 : nullptr;
    if (field && in >> kb) *field = kb * 1024;
    in.ignore(1 << 12, '\n');
  }
  return p;
}

std::uint64_t shm_resident_bytes(const std::string& segment_name) {
  struct stat st;
  if (::stat(("/dev/shm/" + segment_name).c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace dnsarena::sim::fleet

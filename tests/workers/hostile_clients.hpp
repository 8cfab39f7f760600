// SPDX-License-Identifier: GPL-3.0-or-later
// Small attackers for the hostile-network tests of `dnsarena serve`: TCP
// clients bound to a chosen loopback source address, a raw-socket UDP sender that forges
// the source port, and readers of a worker's /proc figures. Loopback only; every call is
// bounded in time.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::test {

// A YAML config file holding `body`, removed by the destructor.
class TempConfig {
public:
  explicit TempConfig(const std::string& body);
  ~TempConfig();
  TempConfig(const TempConfig&) = delete;
  TempConfig& operator=(const TempConfig&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// A non-blocking TCP socket connected from `source` (e.g. "127.0.1.7", port chosen by
// the kernel) to 127.0.0.1:port; -1 on failure. `rcvbuf` > 0 sets SO_RCVBUF first.
int tcp_connect_from(const std::string& source, std::uint16_t port, int rcvbuf = 0);
// The 2-byte length prefix and the message, as a DNS-over-TCP client sends it.
std::vector<std::uint8_t> tcp_framed(const std::vector<std::uint8_t>& msg);
// True when the server has closed `fd` (EOF, reset), waiting at most `wait`. Reads and
// discards whatever data is pending.
bool closed_by_peer(int fd, std::chrono::milliseconds wait);

// Sends `payload` as a UDP datagram from 127.0.0.1:src_port to 127.0.0.1:dst_port over a
// raw socket (so src_port may be 0, which no ordinary socket can use). False on failure.
bool raw_udp_send(std::uint16_t src_port, std::uint16_t dst_port, const std::vector<std::uint8_t>& payload);

// /proc/<pid>/status VmRSS in KiB (0 when unreadable).
std::uint64_t vm_rss_kib(pid_t pid);

// Milliseconds on the steady clock since `since`.
inline std::uint64_t elapsed_ms(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count());
}
// utime + stime of `pid` in clock ticks.
std::uint64_t cpu_ticks(pid_t pid);
// Open descriptors of `pid` (entries of /proc/<pid>/fd).
unsigned open_fds(pid_t pid);
// The soft "Max open files" of `pid` from /proc/<pid>/limits (0 when unreadable).
std::uint64_t nofile_soft_limit(pid_t pid);

}  // namespace dnsarena::test

// SPDX-License-Identifier: GPL-3.0-or-later
// Notices that a policy zone file changed on disk, so the supervisor compiles and swaps the
// policy without a SIGHUP (policy.watch_interval_ms; Knot Resolver's policy.rpz watch).
//
// How: stat() of each file every interval, compared with what it looked like when it was
// last compiled (device, inode, size, modification time in ns, or missing). stat polling
// rather than inotify: it sees in-place writes, a file renamed into place and a replaced
// directory alike, and holds no descriptor. A change is reported once the file looked the
// same at two checks in a row, an interval apart, so a file still being written is not
// compiled half way; a writer that pauses longer than an interval between its writes can
// still be read early, and then the finished file is one more change.
// A file whose compile failed is not compiled again until it changes again (the error is
// logged once, not every interval).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dnsarena::policy {

class ZoneFileWatch {
public:
  ZoneFileWatch(std::vector<std::string> files, std::uint64_t interval_ms);

  // Records what the files look like now, as the version being compiled: call before
  // reading them.
  void mark_loaded();
  // Milliseconds until the next check (0: due now).
  std::uint64_t ms_until_check(std::uint64_t now_ms) const;
  // When a check is due: the first file whose change has settled, or "" (none, or not due).
  std::string poll(std::uint64_t now_ms);

private:
  struct Look {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Look&) const = default;
  };
  static Look look(const std::string& path);

  std::vector<std::string> files_;
  std::vector<Look> loaded_;  // as last compiled
  std::vector<Look> seen_;    // at the last check
  std::uint64_t interval_ms_;
  std::uint64_t next_check_ms_ = 0;
};

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
// Where and how `dnsarena serve` logs: standard error, one line per event.
//
// On a terminal or into a file: "2026-12-02T05:40:00.123 [info] [pid 42] message".
// Under systemd (journald reads standard error: $JOURNAL_STREAM names its device and
// inode): "<6>[pid 42] message", the syslog priority prefix that journald turns into
// the entry's PRIORITY (journalctl -p warning), and no timestamp (journald adds its
// own). The workers inherit it at fork.
#pragma once
#include <string>

namespace dnsarena::workers {

// REQUIRES: level is valid (ServeConfig::validate checks it).
void configure_logging(const std::string& level);

// Whether standard error is the stream $JOURNAL_STREAM names (systemd's journal).
bool stderr_is_journal();

}  // namespace dnsarena::workers

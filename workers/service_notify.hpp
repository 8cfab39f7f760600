// SPDX-License-Identifier: GPL-3.0-or-later
// Telling the service manager what the service is doing (systemd's sd_notify protocol:
// contrib/systemd/dnsarena.service is Type=notify).
//
//   ready(status)   READY=1 once the workers are forked and the sockets bound
//   reloading()     RELOADING=1 while a SIGHUP reload runs; ready() again after it
//   stopping()      STOPPING=1 when SIGTERM/SIGINT is taken
//   watchdog()      WATCHDOG=1; the supervisor sends it every watchdog_interval_ms()
//                   (half of WatchdogSec=), so a hung supervisor is restarted by systemd
//
// Built with libsystemd when CMake finds it (DNSARENA_HAVE_SYSTEMD; optional like the
// other optional parts); without it, or when not started by systemd ($NOTIFY_SOCKET
// unset), every call does nothing. Cost: one datagram per call.
#pragma once
#include <cstdint>
#include <string>

namespace dnsarena::workers {

class ServiceNotify {
public:
  static void ready(const std::string& status);
  static void reloading();
  static void stopping();
  static void watchdog();
  // Milliseconds between watchdog() calls (half of WatchdogSec=), or 0: no watchdog.
  static std::uint64_t watchdog_interval_ms();
  // Whether this build can talk to systemd at all.
  static bool available();
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/service_notify.hpp"

#ifdef DNSARENA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "common/monotonic_clock.hpp"

namespace dnsarena::workers {

#ifdef DNSARENA_HAVE_SYSTEMD

void ServiceNotify::ready(const std::string& status) { sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str()); }
// MONOTONIC_USEC accompanies RELOADING=1 (systemd 253's Type=notify-reload asks for it;
// older managers ignore it).
void ServiceNotify::reloading() {
  sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", static_cast<unsigned long long>(common::monotonic_us()));
}
void ServiceNotify::stopping() { sd_notify(0, "STOPPING=1"); }
void ServiceNotify::watchdog() { sd_notify(0, "WATCHDOG=1"); }
std::uint64_t ServiceNotify::watchdog_interval_ms() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0) return 0;
  return usec / 2000;
}
bool ServiceNotify::available() { return true; }

#else

void ServiceNotify::ready(const std::string&) {}
void ServiceNotify::reloading() {}
void ServiceNotify::stopping() {}
void ServiceNotify::watchdog() {}
std::uint64_t ServiceNotify::watchdog_interval_ms() { return 0; }
bool ServiceNotify::available() { return false; }

#endif

}  // namespace dnsarena::workers

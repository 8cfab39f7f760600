// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/service_notify.hpp"

#include <time.h>

#ifdef DNSARENA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace dnsarena::workers {

#ifdef DNSARENA_HAVE_SYSTEMD

namespace {

// MONOTONIC_USEC accompanies RELOADING=1 (systemd 253's Type=notify-reload asks for it;
// older managers ignore it).
std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace

void ServiceNotify::ready(const std::string& status) { sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str()); }
void ServiceNotify::reloading() {
  sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", static_cast<unsigned long long>(monotonic_usec()));
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

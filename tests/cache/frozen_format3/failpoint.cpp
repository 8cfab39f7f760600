// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/failpoint.cpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
#include "failpoint.hpp"

#include <memory>

namespace dnsarena::frozen3 {

namespace detail {
std::atomic<const FailpointHandler*> g_failpoint{nullptr};

void run_failpoint(FailStep step, std::uint64_t detail) {
  if (const FailpointHandler* h = g_failpoint.load(std::memory_order_acquire)) (*h)(step, detail);
}
}  // namespace detail

void set_failpoint(FailpointHandler handler) {
  // The previous handler is kept alive (leaked) rather than freed under a possible
  // caller: tests install a handful per process.
  static std::unique_ptr<FailpointHandler> current;
  if (!handler) {
    detail::g_failpoint.store(nullptr, std::memory_order_release);
    return;
  }
  auto next = std::make_unique<FailpointHandler>(std::move(handler));
  detail::g_failpoint.store(next.get(), std::memory_order_release);
  current.release();  // NOLINT: intentionally leaked, see above
  current = std::move(next);
}

}  // namespace dnsarena::frozen3

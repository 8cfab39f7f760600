// SPDX-License-Identifier: GPL-3.0-or-later
// How an admin command ends: run's exit code, or exit code 2 with "dnsarena CMD: what"
// on standard error for an exception (a missing segment, a malformed dump, ...).
//
//   common::add_command<FlushRequest>(app, "flush", "help", reporting("flush", run_flush));
#pragma once
#include <exception>
#include <iostream>

namespace dnsarena::admin {

// Wraps `int run(const Request&)`: an exception becomes exit status 2 with its message.
template <typename Run>
auto reporting(const char* command, Run run) {
  return [command, run](const auto& request) {
    int rc = 2;
    try {
      rc = run(request);
    } catch (const std::exception& e) {
      std::cerr << "dnsarena " << command << ": " << e.what() << "\n";
    }
    return rc;
  };
}

}  // namespace dnsarena::admin

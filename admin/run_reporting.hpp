// How an admin command ends: run's exit code, or exit code 2 with "dnsarena CMD: what"
// on standard error for an exception (a missing segment, a malformed dump, ...).
//
//   common::add_command<FlushRequest>(app, "flush", "help", reporting("flush", run_flush));
#pragma once
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

namespace dnsarena::admin {

// Wraps `int run(const Request&)` into the callback common::add_command expects.
template <typename Run>
auto reporting(const char* command, Run run) {
  return [command, run](const auto& request) {
    int rc = 2;
    try {
      rc = run(request);
    } catch (const std::exception& e) {
      std::cerr << "dnsarena " << command << ": " << e.what() << "\n";
    }
    if (rc != 0) throw CLI::RuntimeError(rc);
  };
}

}  // namespace dnsarena::admin

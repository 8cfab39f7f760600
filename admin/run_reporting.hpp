// How an admin command ends: fn's exit code, or exit code 2 with "dnsarena CMD: what"
// on standard error for an exception (a missing segment, a malformed dump, ...).
#pragma once
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

namespace dnsarena::admin {

template <typename Fn>
void run_reporting(const char* command, Fn fn) {
  int rc = 2;
  try {
    rc = fn();
  } catch (const std::exception& e) {
    std::cerr << "dnsarena " << command << ": " << e.what() << "\n";
  }
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace dnsarena::admin

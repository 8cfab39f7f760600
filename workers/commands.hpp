// Subcommands that live in workers/: `check` (and, later, `serve`, `stats`).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::workers {

// `dnsarena check SEGMENT`: verifies a segment like fsck.
void add_check_command(CLI::App& app);

}  // namespace dnsarena::workers

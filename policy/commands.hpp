// SPDX-License-Identifier: GPL-3.0-or-later
// The response policy's commands, registered by the daemon's command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::policy {

// `dnsarena policy` (a group): `bench` (policy_bench.hpp) and `check FILE...` (reads RPZ
// files and local config as serve would, prints what each zone holds, errors as FILE:LINE).
void add_policy_command(CLI::App& app);

}  // namespace dnsarena::policy

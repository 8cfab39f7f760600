// SPDX-License-Identifier: GPL-3.0-or-later
// The validator's commands, registered by the daemon's command table (app/main.cpp).
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::dnssec {

// `dnsarena dnssec` (a group):
//   bench [--seconds S] [--json]       CPU per RRSIG verification per algorithm, per NSEC3
//                                      hash per iteration count (verify_bench.hpp)
//   check-trust FILE... [--negative NAME]...
//                                      reads trust anchor files as a validator would and
//                                      prints each anchor (zone, DS / DNSKEY: key tag,
//                                      algorithm, digest type or flags, usable or not)
//                                      and the negative anchors; errors as FILE:LINE
void add_dnssec_command(CLI::App& app);

}  // namespace dnsarena::dnssec

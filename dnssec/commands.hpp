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
//   update-trust FILE [--server ADDR:PORT] [--if-due] [--dry-run] [--json]
//                                      one RFC 5011 probe of the file's trust point,
//                                      written back atomically (autotrust.hpp)
//   nta add|remove|list                run-time negative trust anchors: registered below this
//                                      group by the command table from admin/nta_command.cpp
//                                      (it needs the cache segment, which dnssec/ never touches)
void add_dnssec_command(CLI::App& app);
// The update-trust subcommand, into the group (update_trust_command.cpp).
void add_update_trust(CLI::App& group);

}  // namespace dnsarena::dnssec

// SPDX-License-Identifier: GPL-3.0-or-later
// Operator commands that inspect and change a live cache (admin/): `flush`, `dump`,
// `restore`, `migrate`, `top`, `check`, `dnssec nta`, registered by the command table (app/main.cpp).
//
// Why a module of their own: they need the cache and libknot's text forms (dump,
// restore) but none of serving (sockets, upstreams, YAML), so admin/ sits beside
// workers/ on the cache (cmake/DependencyRule.cmake: admin may use dns, cache and common).
// `stats` stays in workers/ (it shares its collector with /metrics).
//
// Every command attaches the segment like any process (Segment::attach, a stat slot of
// role tool), works while workers serve, and leaves `dnsarena check` clean.
#pragma once
#include <CLI/CLI.hpp>

namespace dnsarena::admin {

// `dnsarena flush NAME [--type T] [--subtree] [--segment SEG]`
void add_flush_command(CLI::App& app);
// `dnsarena dump SEGMENT [--out FILE]`
void add_dump_command(CLI::App& app);
// `dnsarena restore FILE [--segment SEG]`
void add_restore_command(CLI::App& app);
// `dnsarena migrate SEGMENT [--max-entries N] [--arena-bytes S] [--region-bytes S]`
void add_migrate_command(CLI::App& app);
// `dnsarena top [--by hits|bytes] [-n N] [--segment SEG]`
void add_top_command(CLI::App& app);
// `dnsarena check SEGMENT [--json]`: verifies a segment like fsck (cache/segment_check.hpp).
void add_check_command(CLI::App& app);
// `dnsarena dnssec nta add NAME [--lifetime D] | remove NAME | list [--json]` (each with
// [--segment SEG]), below the dnssec group (nta_command.cpp): run-time negative trust anchors.
void add_nta_command(CLI::App& dnssec_group);

}  // namespace dnsarena::admin

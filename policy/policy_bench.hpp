// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena policy bench`: how fast a large RPZ compiles, how big its image is and what a
// lookup costs, on a zone generated from a seed (policy_command.cpp prints it).
//
// The zone: `rules` triggers under 1,000 registered domains of 8 TLDs, 90% exact
// (r<random>.<domain>.<tld>), 10% `*.` (*.w<random>.<domain>.<tld>); actions 70% NXDOMAIN,
// 10% NODATA, 5% PASSTHRU, 5% DROP, 10% local data (one A record). It is written as an RPZ
// text file and read back through libzscanner, as serve does.
// The lookups, through a sealed mapping as a worker does:
//   no_match       names under the same domains that no rule covers, half of them one label
//                  deeper (q<random>.<domain>.<tld>, www.q<random>...): the exact probe and
//                  the `*.` probe of the 3-label parent both run; `lookups` distinct names,
//                  so the slot table (16+ MB at 1M rules) is mostly read from DRAM
//   no_match_hot   1,000 of those names in a loop: the compute alone, slots in cache
//   match          exact triggers and names below the `*.` triggers, `lookups` of them
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace dnsarena::policy {

struct PolicyBenchOptions {
  std::size_t rules = 1'000'000;
  std::size_t lookups = 1'000'000;
  std::uint64_t seed = 1;
  std::string dir = "/tmp";  // where the generated zone file goes (removed afterwards)
};

struct PolicyBenchResult {
  std::size_t rules = 0;          // triggers compiled
  std::size_t zone_file_bytes = 0;
  double parse_s = 0;             // libzscanner + RuleSet
  double compile_s = 0;           // RuleSet -> image
  double total_s = 0;             // parse + compile (the reload's cost)
  std::size_t image_bytes = 0;
  double bytes_per_rule = 0;
  double no_match_ns = 0;
  double no_match_hot_ns = 0;
  double match_ns = 0;
  std::size_t no_match_found = 0;  // matches among the no-match names: must be 0
  std::size_t match_missed = 0;    // misses among the match names: must be 0
};

PolicyBenchResult run_policy_bench(const PolicyBenchOptions& o);

}  // namespace dnsarena::policy

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
// The chain check on answers as the cache writes them (answer_chain.hpp), on the same image:
//   chain_plain    an A answer owned by the query name, OPT last: what every hit without a
//                  CNAME pays (a walk over the record types; no lookup)
//   chain_cname    the query name CNAME to a name no rule covers, then its A: one lookup of
//                  a distinct name per answer (`lookups` of them, cold as no_match)
// With `hit_ns` (a hit's user-space ns per query, as `dnsarena-lab bench serve` reports
// user_ns_per_query), chain_plain is given as a share of it (target <= 5%).
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
  double hit_ns = 0;         // a hit's user-space ns per query (0: no share computed)
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
  double chain_plain_ns = 0;
  double chain_cname_ns = 0;
  double chain_plain_share = 0;    // chain_plain_ns / hit_ns (0 without hit_ns)
  std::size_t no_match_found = 0;  // matches among the no-match names: must be 0
  std::size_t match_missed = 0;    // misses among the match names: must be 0
};

PolicyBenchResult run_policy_bench(const PolicyBenchOptions& o);

}  // namespace dnsarena::policy

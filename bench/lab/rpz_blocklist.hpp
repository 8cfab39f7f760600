// SPDX-License-Identifier: GPL-3.0-or-later
// The response policy zone of `bench serve --rpz FILE | --rpz-rules N`: one RPZ file that
// serve, Unbound and Knot Resolver all load, and the dnsperf query file that asks for some
// of its names.
//
// A generated blocklist (--rpz-rules N) has N exact QNAME triggers, all `CNAME .`
// (NXDOMAIN), so every server's answer to a blocked name is the same rcode:
//   b<i>.l<i mod 1000>.zone.rpz.bench.   CNAME .     for i in [0, N)
// blocking b<i>.l<i mod 1000>.zone., names under the synthetic upstream's zone ("zone."),
// which that upstream answers NXDOMAIN as well: without the RPZ a blocked name is an
// upstream NXDOMAIN, cached as any negative answer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace dnsarena::bench {

struct RpzFile {
  std::string path;       // absolute
  std::string origin;     // the zone's name, with the final dot (its SOA owner)
  std::size_t rules = 0;  // triggers, as serve compiles them
};

// Writes the generated blocklist of `rules` triggers to DIR/blocklist.rpz.
RpzFile write_rpz_blocklist(const std::string& dir, std::size_t rules);

// A user's RPZ file read as serve reads it: its origin and rule count. Throws
// std::runtime_error with FILE:LINE when it does not parse.
RpzFile read_rpz_file(const std::string& path);

// The name the i-th generated trigger blocks, without the final dot ("b7.l7.zone").
std::string blocked_name(std::size_t i);

// Copies the dnsperf query file `in` to `out`, replacing each line with probability
// percent / 100 by "NAME A" for a blocked name drawn uniformly from the list's `rules`
// (seeded: the same file for every server). Returns the lines replaced.
std::size_t mix_blocked_queries(const std::string& in, const std::string& out, std::size_t rules, unsigned percent,
                                std::uint64_t seed);

}  // namespace dnsarena::bench

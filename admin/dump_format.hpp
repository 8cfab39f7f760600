// SPDX-License-Identifier: GPL-3.0-or-later
// The text form of cache entries written by `dnsarena dump` and read by `restore`.
//
// Purpose: a copy of a cache's contents that does not depend on the segment's binary
// format (entry_format.hpp, cache_key.hpp): a dump written by one format version is
// restored by any other, and an operator can read, grep and edit it. Zone-file-like,
// one entry per block (docs/operator-guide.md, Operator commands):
//
//   ; dnsarena cache dump (text format 1)
//   $DUMPED 1796190000                  wall-clock second the TTLs below were read
//   $ENTRY www.example. A flags=do ecs=192.0.2.0/24 rcode=0 ad=0 ttl=287
//   answer www.example.	287	IN	A	192.0.2.1
//   authority example.	287	IN	NS	ns.example.
//   $END
//
//   $ENTRY line   the key: qname, qtype, key flags (do, cd: DO and CD of the query,
//                 validated: kept by a validating worker ("ad" is read as its older
//                 spelling), dns64: synthesized for DNS64 clients; "-" for none), ECS
//                 scope ("-" for
//                 none), then the answer's RCODE, its AD bit and the entry's remaining
//                 TTL in seconds at $DUMPED; for an entry a validating worker judged,
//                 dnssec=secure|insecure|indeterminate (cache::EntryVerdict; absent: not
//                 validated, and older dumps).
//   records       one per line: the section (answer, authority, additional), then the
//                 record exactly as libknot writes it (knot_text.hpp) with its TTL as a
//                 client would have seen it at $DUMPED.
//   ;             comment lines and blank lines are ignored.
//
// Restore honours the time since $DUMPED: every TTL is reduced by it, and entries whose
// remaining TTL reaches 0 are skipped (counted as expired). An entry so restored answers
// byte for byte as the original would at the same second (same remaining TTLs).
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>

#include "cache/cache.hpp"

namespace dnsarena::admin {

inline constexpr int kDumpTextFormat = 1;

// The key part of an $ENTRY line ("qname qtype flags=.. ecs=..") of an entry's key blob.
std::string key_to_text(std::span<const std::uint8_t> key_blob);

// Writes the header lines (format comment, $DUMPED now).
void write_dump_header(std::ostream& out, std::uint32_t now);
// Writes one entry block (followed by a blank line). REQUIRES: reader.valid().
void write_entry_block(std::ostream& out, cache::EntryReader& reader, std::uint32_t now);

struct RestoreCounts {
  std::uint64_t restored = 0;
  std::uint64_t expired = 0;  // remaining TTL ran out since $DUMPED
  std::uint64_t skipped = 0;  // the cache did not take it (rejected, writer lock unavailable)
};

// Reads a dump and calls insert(key, answer, entry_remaining_ttl) for every entry still
// alive at `now`. Throws std::invalid_argument "FILE:LINE: problem" on malformed input
// (before that, entries already read were inserted).
RestoreCounts read_dump(std::istream& in, const std::string& file_name, std::uint32_t now,
                        const std::function<bool(const cache::CacheKey&, const cache::Answer&)>& insert);

}  // namespace dnsarena::admin

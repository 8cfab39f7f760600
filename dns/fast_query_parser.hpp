// SPDX-License-Identifier: GPL-3.0-or-later
// The fast path of client query parsing: the common query read by hand, everything else
// left to libknot (client_query.hpp, parse_query_knot).
//
// Purpose: nearly every query a resolver sees has one shape, and parsing it with libknot
// costs a packet allocation, a lowercase copy of the name, an RR array and an EDNS option
// index per query. This reads that shape in one forward pass over the bytes and fills
// the same ClientQuery libknot's path would, or declines and changes nothing.
//
// The shape taken (anything else declines, so libknot gives its verdict as before):
//
//   header     QR 0, opcode QUERY; QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 0 or 1
//   question   an uncompressed name (labels <= 63 bytes, <= 255 bytes in all), a type
//              other than 0, IXFR and AXFR, class IN
//   OPT        (when ARCOUNT is 1) owner the root as one zero byte, type 41, version 0,
//              rdata a run of options each within it; an ECS option (the last one
//              counts, as libknot's option index keeps the last) must be one libknot
//              accepts with scope 0; a COOKIE option (the last one) must have a length
//              RFC 7873 allows (8, or 16..40) and is copied; other options are skipped unread
//   end        the packet ends right after the question or the OPT record
//
// Declined (libknot decides): responses, other opcodes, zero or several questions, any
// answer or authority record, an additional record other than an OPT with a root owner
// written as one byte, EDNS version != 0, an ECS option that is malformed or has a scope,
// a COOKIE option of another length, a class-IN OPT with empty rdata (libknot refuses
// that one), bytes after the last record, unsupported types and classes. Every verdict other than `ok` therefore comes
// from libknot's path, and the differential test (tests/dns/fast_query_parser_test.cpp,
// tests/fuzz/query_parser_diff_fuzz.cpp) checks that whenever this path accepts, libknot
// accepts with the same ClientQuery.
//
// Costs: one pass over the packet, no allocation, no writes to it; about a tenth of the
// libknot path's instructions. Given a cache key, the name's one copy also lowercases it
// into the key, so the worker's plain key needs no second walk of the name.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dns/client_query.hpp"

namespace dnsarena::cache {
class CacheKey;
}

namespace dnsarena::dns {

// Reads `wire` when it has the shape above: fills `q` (as parse_query_knot would, verdict
// ok) and returns true. Otherwise returns false; `q` may then hold partial values and
// must be parsed again by parse_query_knot.
// With `key`, the question name is copied into `q` and lowercased into the key in one
// pass (CacheKey::take_validated_name: the labels were checked here); the caller completes
// it with key->finish_plain once it knows the key's flags. When this returns false the key
// may hold a taken name: the caller drops it (parse_query does).
bool parse_query_fast(const std::uint8_t* wire, std::size_t len, ClientQuery& q, cache::CacheKey* key = nullptr);

}  // namespace dnsarena::dns

// SPDX-License-Identifier: GPL-3.0-or-later
// A client's query as the resolver sees it: parsing the untrusted packet (with libknot)
// into a small value that owns its bytes, and the error responses written for it.
//
// Purpose: everything the worker needs to know about a client's packet, in one small
// value (ClientQuery), so a query can wait for an upstream answer after the receive
// buffer has been reused.
//
// Costs: parse_query reads the common query by hand in one pass (fast_query_parser.hpp);
// any other packet goes through knot_pkt_parse in place (one packet struct allocated per
// call by libknot). Both copy the question name (<= 255 bytes) into the ClientQuery;
// write_error_response is straight-line byte writes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "dns/ecs_option.hpp"
#include "dns/extended_error.hpp"
#include "dns/server_cookie.hpp"
#include "wire/constants.hpp"

namespace dnsarena::cache {
class CacheKey;
}

namespace dnsarena::dns {

struct ClientQuery {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;  // header flags word as received
  std::array<std::uint8_t, 255> qname_storage{};
  std::uint8_t qname_len = 0;
  std::uint16_t qtype = 0;
  std::uint16_t qclass = 1;
  bool edns = false;
  std::uint16_t udp_size = 512;  // the client's limit (512 without EDNS)
  bool do_bit = false;
  EcsOption ecs;
  // The COOKIE option (RFC 7873) as received; the worker replaces it by the one its
  // answer carries (workers/server_cookies.hpp). len 0: none.
  Cookie cookie;

  std::span<const std::uint8_t> qname() const { return {qname_storage.data(), qname_len}; }
  bool cd() const { return (flags & wire::kFlagCd) != 0; }
};

enum class ParseVerdict {
  ok,
  drop,       // not worth an answer (a response, shorter than a header)
  formerr,    // answer FORMERR (header parsed, rest malformed)
  notimp,     // answer NOTIMP (opcode other than QUERY, zone transfers)
  refused,    // answer REFUSED (class other than IN)
  badvers,    // answer BADVERS (EDNS version other than 0, RFC 6891 6.1.3)
};

// Parses an untrusted client packet. On formerr/notimp/refused, `q.id`, `q.flags` and as
// much of the question as was readable are filled for the error response.
// `wire` may be modified by the parser (libknot takes a non-const buffer).
// The common query takes the hand-written path (fast_query_parser.hpp); every other packet,
// and every verdict other than ok, comes from parse_query_knot.
// With `key` (the worker's batch path): when the fast path takes the packet, the key holds
// the lowercased name for CacheKey::finish_plain; otherwise it holds none (finish_plain
// returns false and the caller uses assign).
ParseVerdict parse_query(std::uint8_t* wire, std::size_t len, ClientQuery& q, cache::CacheKey* key = nullptr);
// The same with libknot alone (the reference the fast path is tested against).
ParseVerdict parse_query_knot(std::uint8_t* wire, std::size_t len, ClientQuery& q);

// Writes a response with `rcode` (an extended rcode's upper bits go in the OPT), the
// client's ID, opcode, RD and CD, the question when known (qname_len > 0), and an OPT
// record (version 0) when the query had EDNS, carrying `ede` (RFC 8914) when given and
// q.cookie when it has one. Returns its size.
// Returns 0 when capacity < kMaxErrorResponseBytes (the largest error response), + 6 with
// `ede`, + 4 + q.cookie.len with a cookie.
inline constexpr std::size_t kMaxErrorResponseBytes = 12 + 255 + 4 + 11 + kMaxEcsOptionBytes;
std::size_t write_error_response(const ClientQuery& q, std::uint16_t rcode, std::uint8_t* out, std::size_t capacity,
                                 std::optional<ExtendedError> ede = std::nullopt);

}  // namespace dnsarena::dns

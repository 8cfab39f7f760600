// DNS messages on the worker's side of the wire: parsing client queries (untrusted, with
// libknot), writing error responses, and building the query sent upstream.
//
// Purpose: everything the worker needs to know about a client's packet, in one small
// value (ClientQuery) that owns its bytes, so a query can wait for an upstream answer
// after the receive buffer has been reused.
//
// Costs: parse_query runs knot_pkt_parse over the packet (one packet struct allocated per
// call by libknot); the writers are straight-line byte writes.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "cache/cache_key.hpp"

namespace dnsarena::workers {

inline constexpr std::uint16_t kRcodeNoError = 0, kRcodeFormErr = 1, kRcodeServFail = 2, kRcodeNxDomain = 3,
                               kRcodeNotImp = 4, kRcodeRefused = 5,
                               kRcodeBadVers = 16;  // extended (RFC 6891): 1 in the OPT, 0 in the header
inline constexpr std::uint16_t kOptEcs = 8;  // EDNS option code of Client Subnet (RFC 7871)

// An ECS option as carried in a message.
struct EcsOption {
  bool present = false;
  std::uint16_t family = 0;  // 1 IPv4, 2 IPv6
  std::uint8_t source_prefix = 0;
  std::uint8_t scope_prefix = 0;
  std::array<std::uint8_t, 16> address{};
};

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

  std::span<const std::uint8_t> qname() const { return {qname_storage.data(), qname_len}; }
  bool cd() const { return (flags & 0x0010) != 0; }
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
ParseVerdict parse_query(std::uint8_t* wire, std::size_t len, ClientQuery& q);

// Writes a response with `rcode` (an extended rcode's upper bits go in the OPT), the
// client's ID, opcode, RD and CD, the question when known (qname_len > 0), and an OPT
// record (version 0) when the query had EDNS. Returns its size.
// REQUIRES: capacity >= 12 + 255 + 4 + 11 + ecs bytes.
std::size_t write_error_response(const ClientQuery& q, std::uint16_t rcode, std::uint8_t* out, std::size_t capacity);

// RFC 8482 section 4.2: the answer to ANY over UDP is one synthesized HINFO record
// ("RFC8482", "") owned by the qname, TTL 3600, instead of every RRset (a 100x
// amplifier). Same header rules as write_error_response. Returns its size.
std::size_t write_rfc8482_response(const ClientQuery& q, std::uint8_t* out, std::size_t capacity);

// The EDNS option bytes (code, length, data) echoing `ecs` with `scope`, for replies.
// Returns the number of bytes written into out (<= 24).
std::size_t write_ecs_option(const EcsOption& ecs, std::uint8_t scope, std::uint8_t* out);

// Builds the query sent upstream: ID `id`, RD (and CD when asked), the lowercase qname,
// an OPT with payload 1232, DO as asked, and the ECS option when `ecs.present`.
std::size_t write_upstream_query(std::uint16_t id, std::span<const std::uint8_t> qname_lower, std::uint16_t qtype,
                                 bool do_bit, bool cd, const EcsOption& ecs, std::uint8_t* out, std::size_t capacity);

inline std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

}  // namespace dnsarena::workers

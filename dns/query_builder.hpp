// SPDX-License-Identifier: GPL-3.0-or-later
// Building a DNS query: the resolver's query upstream (workers/) and the load client's
// and tests' queries (sim/traffic/, tests/) come from this one builder.
//
//   header      the ID asked, RD set, CD as asked, one question, no answer or authority,
//               one additional record when there is an OPT
//   question    the name exactly as given (callers choose its case: 0x20 upstream), the
//               type, class IN
//   OPT         when `edns`, `do_bit` or an ECS option asks for one (opt_record.hpp):
//               payload 1232, DO as asked, the ECS option with scope 0 (RFC 7871 6),
//               then an empty edns-tcp-keepalive option when `tcp_keepalive` (RFC 7828
//               3.1: a client over TCP or TLS asks the server to keep the connection)
//
// Costs: write_query is straight-line byte writes into the caller's buffer (no
// allocation); build_query allocates the returned string once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/bytes.hpp"
#include "dns/ecs_option.hpp"

namespace dnsarena::dns {

struct QuerySpec {
  std::uint16_t id = 0;
  std::span<const std::uint8_t> qname;  // uncompressed wire form, case as it is to be sent
  std::uint16_t qtype = 0;
  bool cd = false;      // checking disabled (the client's CD, passed on)
  bool edns = true;     // send an OPT record (implied by do_bit and ecs.present)
  bool do_bit = false;  // DNSSEC OK
  EcsOption ecs;        // sent when ecs.present
  bool tcp_keepalive = false;  // edns-tcp-keepalive, empty (implies an OPT record)
};

inline constexpr std::uint16_t kOptionTcpKeepalive = 11;  // RFC 7828

// The largest query write_query can produce.
inline constexpr std::size_t kMaxQueryBytes = 12 + 255 + 4 + 11 + kMaxEcsOptionBytes + 4;

// Writes the query into out. Returns its size, or 0 when capacity is below
// 12 + qname + 4 + 11 + 24 + 4 (a query that may not fit is not started).
std::size_t write_query(const QuerySpec& spec, std::uint8_t* out, std::size_t capacity);
// The same query as owned bytes.
common::Bytes build_query(const QuerySpec& spec);

}  // namespace dnsarena::dns

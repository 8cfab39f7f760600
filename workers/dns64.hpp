// SPDX-License-Identifier: GPL-3.0-or-later
// DNS64 (RFC 6147) with the address format of RFC 6052: what the operator configures,
// which queries it applies to, and the address and name arithmetic. The query path's part
// (an AAAA answer without AAAA records completed from the name's A records) is
// query_pipeline_dns64.cpp; the synthesized messages are dns64_synthesis.hpp's.
//
//   Dns64Config        prefix (64:ff9b::/96 by default; RFC 6052 2.2 lengths 32, 40, 48,
//                      56, 64, 96, bits 64-71 zero), exclude (AAAA records inside these
//                      ranges count as absent; ::ffff:0:0/96 by default, RFC 6147 5.1.4),
//                      clients (who gets DNS64; empty: every client)
//   dns64_key_flag     the check stage's decision for one query: cache::kKeyDns64 for an
//                      AAAA query of a DNS64 client (not DO+CD: RFC 6147 5.5, such a
//                      client validates and gets the real answer), and for a PTR query of
//                      such a client for a name under the prefix's ip6.arpa zone (RFC
//                      6147 5.3.1); 0 otherwise. The flag is part of the cache key
//                      (cache_key.hpp), so a synthesized answer is never found by a client
//                      without it, nor the real NODATA by one with it
//   embed_ipv4 / extract_ipv4   RFC 6052 2.2: the IPv4 address's octets at the prefix
//                      length, skipping octet 8 (bits 64-71, "u"), the suffix zero
//   ptr_ipv4_name      the in-addr.arpa name for a 32-nibble ip6.arpa name under the prefix
//   inspect_aaaa_answer  whether an AAAA answer is synthesized: NOERROR, not truncated, and
//                      no AAAA record outside the exclude ranges (NODATA, or only excluded
//                      ones); the TTL cap RFC 6147 5.1.7 takes from its SOA
//
// Costs: dns64_key_flag is one compare for a query that is neither AAAA nor PTR, else a
// walk of `clients` (a masked compare each) and, for PTR, one pass over the name; a
// configuration without a dns64 section pays one predictable branch in the check stage.
// inspect_aaaa_answer is one pass over the message's records (no name decompressed).
#pragma once
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dns/client_query.hpp"
#include "workers/subnet.hpp"

namespace dnsarena::workers {

// The RFC 6052 prefix: its first `length` bits (the rest zero).
struct Dns64Prefix {
  std::array<std::uint8_t, 16> net{0x00, 0x64, 0xff, 0x9b};  // 64:ff9b::
  std::uint8_t length = 96;

  // "64:ff9b::/96", "2001:db8:100::/40". Throws std::invalid_argument: not an IPv6
  // address, a length other than 32, 40, 48, 56, 64 or 96, bits set past the length, or
  // bits 64-71 set (RFC 6052 2.2: they must be zero).
  static Dns64Prefix parse(const std::string& text);
  bool operator==(const Dns64Prefix&) const = default;
};

struct Dns64Config {
  bool enabled = false;  // a dns64 section is in the configuration
  Dns64Prefix prefix;
  std::vector<Subnet> exclude{Subnet::parse("::ffff:0:0/96")};  // IPv6 ranges only
  std::vector<Subnet> clients;                                 // empty: every client
};

// "::ffff:0:0/96": an IPv6 range for Dns64Config::exclude. Throws std::invalid_argument
// (Subnet::parse's errors, or an IPv4 subnet).
Subnet parse_dns64_exclude(const std::string& text);

// The IPv6 address for `ipv4` under `prefix` (RFC 6052 2.2).
std::array<std::uint8_t, 16> embed_ipv4(const Dns64Prefix& prefix, const std::uint8_t* ipv4);
// The IPv4 address embedded in `ipv6` when it is under `prefix`; false otherwise.
bool extract_ipv4(const Dns64Prefix& prefix, const std::uint8_t* ipv6, std::uint8_t* ipv4);

// The wire name d.c.b.a.in-addr.arpa. for `qname`, a 32-nibble ip6.arpa name (any case)
// whose address is under `prefix`, in out[0, 30); returns its length, 0 for any other name.
std::size_t ptr_ipv4_name(const Dns64Prefix& prefix, std::span<const std::uint8_t> qname, std::uint8_t* out);

// Whether `client` is one DNS64 applies to (cfg.clients; empty: all).
bool dns64_client(const Dns64Config& cfg, const sockaddr_storage& client);

// The key flag for `q` from `client` (above). REQUIRES: cfg.enabled.
std::uint8_t dns64_key_flag(const Dns64Config& cfg, const dns::ClientQuery& q, const sockaddr_storage& client);

// What an AAAA answer means for DNS64.
struct AaaaVerdict {
  bool synthesize = false;          // ask A and synthesize
  std::uint32_t ttl_cap = UINT32_MAX;  // min(SOA TTL, SOA MINIMUM) of the answer's SOA (RFC 6147 5.1.7)
};
// REQUIRES: msg[0, n) is a message the pipeline wrote (names may be compressed).
AaaaVerdict inspect_aaaa_answer(const Dns64Config& cfg, const std::uint8_t* msg, std::size_t n);

}  // namespace dnsarena::workers

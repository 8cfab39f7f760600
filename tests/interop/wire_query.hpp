// SPDX-License-Identifier: GPL-3.0-or-later
// Queries of the differential test: every shape a client may send, built byte by byte.
//
// Purpose: the differential test must control what libknot-based clients (kdig) would
// normalise away: the case of each qname letter (0x20), no EDNS at all, the EDNS payload
// size, the DO bit and the EDNS version. RD is always set (dnsarena is a forwarder).
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dnsarena::interop {

struct QueryShape {
  bool edns = false;
  std::uint16_t payload = 0;  // EDNS UDP payload size (edns only)
  bool do_bit = false;        // edns only
  std::uint8_t edns_version = 0;
  bool tcp = false;
  bool cd = false;  // header flag Checking Disabled
  // What a reply may weigh: 512 without EDNS, else the payload; 65535 over TCP.
  std::size_t limit() const { return tcp ? 65535 : edns ? std::max<std::size_t>(payload, 512) : 512; }
  std::string describe() const;  // "udp edns=1232 do" / "tcp noedns"
};

// Wire form of a query for `qname` (absolute, dotted, letters in the case wanted).
std::vector<std::uint8_t> build_query(std::uint16_t id, const std::string& qname, std::uint16_t qtype,
                                      const QueryShape& shape);

// `name` with each letter's case drawn at random (DNS 0x20).
std::string random_case(const std::string& name, std::mt19937_64& rng);

// "A", "TXT", "TYPE65" ... (libknot's names).
std::string type_name(std::uint16_t qtype);

}  // namespace dnsarena::interop

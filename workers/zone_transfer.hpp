// SPDX-License-Identifier: GPL-3.0-or-later
// One zone transfer from a primary over TCP: AXFR (RFC 5936) or IXFR (RFC 1995), with
// TSIG (RFC 8945) through libknot's tsig-op when a key is given. No HMAC of our own.
//
// The reply stream is read message by message (2-byte length, then the message); each
// message must carry the query's ID, RCODE NOERROR and, with a key, a TSIG that
// verifies: the first against the query's MAC, each next one against the previous
// message's MAC (knotd signs every message; an unsigned one is refused). Records are
// taken from the answer sections, one RR at a time:
//   AXFR:  SOA, records..., SOA                     -> kind axfr, `records` (SOA first)
//   IXFR:  SOA(new) alone                           -> up_to_date (our serial is current)
//          SOA(new), SOA(ours), removed..., SOA(n1), added..., SOA(n1), ..., SOA(new)
//                                                   -> kind ixfr, `deltas` in order
//          SOA(new), anything but SOA(ours)         -> the primary sent the whole zone
//                                                   (RFC 1995 section 4): kind axfr
// Bounds (TransferLimits): records, bytes read, and the time of the whole transfer; past
// one, or on any error (connection closed before the final SOA, a bad message, a TSIG
// that does not verify), TransferError says what and nothing is returned.
// Costs: one TCP connection; memory: the records received (about 60 B each plus their
// names and data).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dns/knot_packet.hpp"  // libknot (knot_tsig_key_t), inside extern "C"

namespace dnsarena::workers {

using XfrBytes = std::basic_string<std::uint8_t>;

struct ZoneRecord {
  XfrBytes owner;  // lowercase wire form
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  XfrBytes rdata;  // wire form, names uncompressed
};

struct IxfrDelta {
  std::uint32_t from = 0, to = 0;
  std::vector<ZoneRecord> removed, added;  // SOAs not included
};

enum class TransferKind { axfr, ixfr, up_to_date };
const char* to_string(TransferKind k);

struct TransferLimits {
  std::uint64_t max_records = 10'000'000;
  std::uint64_t max_bytes = 2ull << 30;
  unsigned timeout_ms = 60'000;
};

struct TransferResult {
  TransferKind kind = TransferKind::axfr;
  std::uint32_t serial = 0;         // the primary's serial
  ZoneRecord soa;                   // the primary's SOA
  std::vector<ZoneRecord> records;  // axfr: the whole zone, SOA first
  std::vector<IxfrDelta> deltas;    // ixfr
  std::uint64_t bytes = 0;          // of the reply stream
  std::uint64_t messages = 0;
};

struct TransferError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest TSIG MAC libknot makes (HMAC-SHA512).
inline constexpr std::size_t kMaxTsigDigest = 64;

// The serial of a SOA's rdata (REQUIRES: rdata of type SOA, at least 20 bytes).
std::uint32_t soa_serial(const XfrBytes& rdata);
// The refresh and retry intervals of a SOA's rdata.
std::uint32_t soa_refresh(const XfrBytes& rdata);
std::uint32_t soa_retry(const XfrBytes& rdata);

// Transfers `zone` (lowercase wire form) from `primary`: IXFR from `have_serial` when
// given, else AXFR. `key`: TSIG key or nullptr. Throws TransferError.
TransferResult transfer_zone(const sockaddr* primary, socklen_t len, const XfrBytes& zone,
                             std::optional<std::uint32_t> have_serial, const knot_tsig_key_t* key,
                             const TransferLimits& limits);

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The PROXY protocol version 2 header (haproxy's proxy-protocol.txt, section 2.2): what a
// load balancer puts in front of a client's bytes so that the server behind it learns the
// client's address. Read strictly: only what a balancer in front of a DNS server sends
// is accepted, anything else is malformed (the caller drops it).
//
// Layout (every multi-byte field in network byte order):
//
//   offset  size  field     meaning
//   0       12    sig       \r \n \r \n \0 \r \n Q U I T \n  (0D 0A 0D 0A 00 0D 0A 51 55 49 54 0A)
//   12      1     ver_cmd   |-- version (4 bits) = 2 --|-- command (4 bits) --|
//                           command 0 LOCAL (the balancer's own traffic, a health check:
//                           the connection's own addresses stand), 1 PROXY (a relayed client)
//   13      1     fam       |-- family (4 bits) --|-- transport (4 bits) --|
//                           family 0 UNSPEC, 1 INET, 2 INET6 (3 UNIX: refused);
//                           transport 0 UNSPEC, 1 STREAM, 2 DGRAM
//   14      2     len       bytes that follow: the address block, then TLVs
//   16      len   addresses INET:  src 4, dst 4, src_port 2, dst_port 2  (12 bytes)
//                           INET6: src 16, dst 16, src_port 2, dst_port 2  (36 bytes)
//                           UNSPEC: none
//   16+A    rest  TLVs      |-- type 1 --|-- length 2 --|-- value (length) --| repeated to
//                           the end of len exactly
//
// Accepted shapes:
//   PROXY  INET or INET6, over STREAM on a stream, DGRAM on a datagram (the transport the
//          header says must be the one it came on); the source address is the client's.
//   LOCAL  family UNSPEC, INET or INET6, any transport; its addresses (if any) are ignored
//          (haproxy's health checks send LOCAL UNSPEC with len 0).
// Malformed (each a distinct ProxyV2::Malformed reason): a version other than 2, a command
// other than LOCAL and PROXY, UNIX or an unknown family, PROXY with UNSPEC family or
// transport or with the other transport, len shorter than the family's address block,
// a header longer than kProxyV2MaxHeader, a TLV whose 3-byte head or value runs past len,
// and (datagrams) a datagram shorter than the header it announces.
//
// Bounds: a header is at most kProxyV2MaxHeader (512) bytes including its 16-byte
// prefix, so a stream needs at most that much buffered before the verdict, and the TLV
// walk is at most 170 steps. TLV values are not interpreted (PP2_TYPE_CRC32C is not
// verified: a balancer on the path is trusted by address, not by checksum).
//
// Costs: parse() is a 12-byte compare, a few byte tests and the TLV walk; no allocation.
#pragma once
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dnsarena::dns {

inline constexpr std::array<std::uint8_t, 12> kProxyV2Signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                                   0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
inline constexpr std::size_t kProxyV2Prefix = 16;      // signature, ver_cmd, fam, len
inline constexpr std::size_t kProxyV2MaxHeader = 512;  // prefix + addresses + TLVs

enum class ProxyV2Transport : std::uint8_t { stream, dgram };

struct ProxyV2 {
  enum class Verdict : std::uint8_t {
    ok,          // a whole valid header: `length` bytes, then the client's message
    not_proxy,   // the bytes do not start with the signature (not even a prefix of it)
    incomplete,  // a stream's start that may still become a valid header: read more
    malformed,   // `why` says what is wrong
  };
  enum class Malformed : std::uint8_t {
    none,
    version,          // ver_cmd's version is not 2
    command,          // neither LOCAL nor PROXY
    family,           // UNIX, or a family number not defined
    proxy_unspec,     // PROXY with UNSPEC family or transport
    transport,        // PROXY over the other transport (STREAM on a datagram, DGRAM on a stream)
    short_addresses,  // len shorter than the family's address block
    too_long,         // 16 + len over kProxyV2MaxHeader
    tlv_overrun,      // a TLV's head or value runs past len
    truncated,        // a datagram shorter than the header it announces
  };
  Verdict verdict = Verdict::not_proxy;
  Malformed why = Malformed::none;
  bool local = false;          // LOCAL: use the connection's own addresses
  sa_family_t family = AF_UNSPEC;  // PROXY: AF_INET or AF_INET6
  std::uint16_t length = 0;    // ok: the header's bytes (16 + len)
  std::uint16_t tlvs = 0;      // TLVs walked
  // PROXY: the address block as sent (network order; IPv4 in the first 4 bytes). Kept
  // small and written only when read: no socket address is zeroed per datagram.
  std::array<std::uint8_t, 16> source_addr, destination_addr;
  std::array<std::uint8_t, 2> source_port, destination_port;

  // PROXY: the client's address and port (`out` written as far as the family needs: a
  // reader goes by ss_family). Returns its length.
  socklen_t source(sockaddr_storage& out) const;
  // PROXY: the address the client asked (the balancer's), as source().
  socklen_t destination(sockaddr_storage& out) const;
};

// The header at the start of `bytes`. `whole`: the bytes are a whole datagram (a short
// header is malformed: truncated); false: a stream's first bytes (a short one that may
// still be valid is incomplete).
ProxyV2 parse_proxy_v2(std::span<const std::uint8_t> bytes, ProxyV2Transport transport, bool whole);

// What a Malformed reason is, for logs and test messages ("tlv_overrun", ...).
const char* proxy_v2_malformed_name(ProxyV2::Malformed why);

// A PROXY (or, with `source` null, LOCAL UNSPEC) header carrying `source` -> `destination`
// (both AF_INET or both AF_INET6) and `tlv_padding` bytes of one NOOP TLV (0: none), as a
// balancer writes it. For tests, the bench's sender and fuzz seeds.
std::vector<std::uint8_t> build_proxy_v2(const sockaddr_storage* source, const sockaddr_storage* destination,
                                         ProxyV2Transport transport, std::size_t tlv_padding = 0);

}  // namespace dnsarena::dns

// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/fast_query_parser.hpp"

#include <cstring>

#include "cache/cache_key.hpp"
#include "dns/server_cookie.hpp"
#include "wire/constants.hpp"

namespace dnsarena::dns {

using namespace wire;  // the wire format's numbers and names

namespace {

constexpr std::size_t kMaxNameBytes = 255;
constexpr std::size_t kMaxLabelBytes = 63;
constexpr std::size_t kOptFixedBytes = 11;  // root owner (1), type, class, TTL, rdlength

// The ECS option's data (family, source, scope, address), as libknot 3.2's
// knot_edns_client_subnet_parse reads it: a known family, both prefixes within its width,
// at least ceil(source / 8) address bytes (more are ignored), the bits past the source
// prefix cleared. Returns false for anything parse_query_knot would not accept (a
// malformed option, or a scope other than 0, RFC 7871 7.1.1).
bool read_ecs(const std::uint8_t* p, std::size_t n, EcsOption& out) {
  if (n < 4) return false;
  const std::uint16_t family = get16(p);
  if (family != kEcsFamilyIpv4 && family != kEcsFamilyIpv6) return false;
  const unsigned bits = ecs_family_bits(family);
  const std::uint8_t source = p[2], scope = p[3];
  if (source > bits || scope != 0) return false;
  const std::size_t count = (source + 7u) / 8u;
  if (n - 4 < count) return false;
  out.present = true;
  out.family = family;
  out.source_prefix = source;
  out.scope_prefix = 0;
  out.address.fill(0);
  std::memcpy(out.address.data(), p + 4, count);
  if (source % 8 != 0) out.address[count - 1] &= static_cast<std::uint8_t>(0xFF << (8 - source % 8));
  return true;
}

}  // namespace

bool parse_query_fast(const std::uint8_t* wire, std::size_t len, ClientQuery& q, cache::CacheKey* key) {
  // A question needs 12 + 1 + 4 bytes; 65535 is the largest packet libknot reads.
  if (len < kHeaderBytes + 5 || len > 65535) return false;
  const std::uint16_t flags = get16(wire + 2);
  if ((flags & (kFlagQr | kOpcodeMask)) != 0) return false;
  // QDCOUNT 1, ANCOUNT 0, NSCOUNT 0 as one comparison of bytes 4..9, ARCOUNT 0 or 1.
  static constexpr std::uint8_t kCounts[6] = {0, 1, 0, 0, 0, 0};
  if (std::memcmp(wire + 4, kCounts, sizeof kCounts) != 0) return false;
  const std::uint16_t arcount = get16(wire + 10);
  if (arcount > 1) return false;

  // The question name: uncompressed labels, as knot_dname_wire_check without a packet.
  std::size_t pos = kHeaderBytes;
  const std::size_t name_end_max = len - 4;  // room for QTYPE and QCLASS
  for (;;) {
    if (pos >= name_end_max) return false;
    const std::uint8_t label = wire[pos];
    if (label == 0) break;
    if (label > kMaxLabelBytes) return false;  // a pointer or a reserved label type
    pos += 1u + label;
    if (pos - kHeaderBytes + 1 > kMaxNameBytes) return false;
  }
  const std::size_t qname_len = pos + 1 - kHeaderBytes;
  pos += 1;
  const std::uint16_t qtype = get16(wire + pos);
  const std::uint16_t qclass = get16(wire + pos + 2);
  pos += 4;
  if (qclass != kClassIn || qtype == 0 || qtype == kTypeIxfr || qtype == kTypeAxfr) return false;

  q.id = get16(wire);
  q.flags = flags;
  // The name's one copy: into q as it is, and lowercased into the key when there is one.
  if (key) key->take_validated_name(wire + kHeaderBytes, qname_len, len - kHeaderBytes, q.qname_storage.data());
  else std::memcpy(q.qname_storage.data(), wire + kHeaderBytes, qname_len);
  q.qname_len = static_cast<std::uint8_t>(qname_len);
  q.qtype = qtype;
  q.qclass = qclass;
  q.edns = false;
  q.udp_size = 512;
  q.do_bit = false;
  q.ecs = EcsOption{};
  q.cookie.len = 0;
  if (arcount == 0) return pos == len;

  // The OPT record: root owner as one byte, type OPT, payload size in CLASS, the TTL as
  // |ext rcode(8)|version(8)|DO|Z(15)|, then rdata that ends the packet.
  if (len - pos < kOptFixedBytes || wire[pos] != 0 || get16(wire + pos + 1) != kTypeOpt) return false;
  const std::uint16_t payload = get16(wire + pos + 3);
  const std::uint8_t version = wire[pos + 6];
  const std::uint16_t ttl_low = get16(wire + pos + 7);
  const std::size_t rdlen = get16(wire + pos + 9);
  pos += kOptFixedBytes;
  if (version != 0 || rdlen != len - pos) return false;
  if (rdlen == 0 && payload == kClassIn) return false;  // libknot: empty rdata of class IN
  // Options: code, length, data; each must lie inside the rdata. ECS and COOKIE: the last
  // one of each; a COOKIE of a length RFC 7873 forbids is libknot's path's FORMERR.
  const std::uint8_t* ecs = nullptr;
  std::size_t ecs_len = 0;
  const std::uint8_t* cookie = nullptr;
  std::size_t cookie_len = 0;
  while (pos < len) {
    if (len - pos < 4) return false;
    const std::uint16_t code = get16(wire + pos);
    const std::size_t opt_len = get16(wire + pos + 2);
    pos += 4;
    if (len - pos < opt_len) return false;
    if (code == kOptionEcs) {
      ecs = wire + pos;
      ecs_len = opt_len;
    } else if (code == kOptionCookie) {
      if (!cookie_length_ok(opt_len)) return false;
      cookie = wire + pos;
      cookie_len = opt_len;
    }
    pos += opt_len;
  }
  if (ecs && !read_ecs(ecs, ecs_len, q.ecs)) return false;
  if (cookie) {
    std::memcpy(q.cookie.bytes.data(), cookie, cookie_len);
    q.cookie.len = static_cast<std::uint8_t>(cookie_len);
  }
  q.edns = true;
  q.udp_size = payload < 512 ? 512 : payload;
  q.do_bit = (ttl_low & kEdnsFlagDo) != 0;
  return true;
}

}  // namespace dnsarena::dns

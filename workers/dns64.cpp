// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/dns64.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "cache/cache_key.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

using namespace wire;

namespace {

constexpr std::size_t kRecordFixedBytes = 10;  // type, class, ttl, rdlength
constexpr std::size_t kIpv6ArpaNibbles = 32;

// The four octets of the address that hold the IPv4 address under a prefix of `length`
// bits (RFC 6052 2.2: from octet length/8 on, octet 8 skipped).
std::array<std::size_t, 4> ipv4_octets(std::uint8_t length) {
  std::array<std::size_t, 4> at{};
  std::size_t o = length / 8u;
  for (std::size_t i = 0; i < 4; ++i, ++o) {
    if (o == 8) ++o;
    at[i] = o;
  }
  return at;
}

int hex_value(std::uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool label_is(const std::uint8_t* p, const char* text) {
  const std::size_t n = std::strlen(text);
  if (p[0] != n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (ascii_lower(p[1 + i]) != static_cast<std::uint8_t>(text[i])) return false;
  return true;
}

}  // namespace

Dns64Prefix Dns64Prefix::parse(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos)
    throw std::invalid_argument("'" + text + "' has no prefix length (expected ADDRESS/32, 40, 48, 56, 64 or 96)");
  Dns64Prefix p;
  const std::string addr = text.substr(0, slash);
  if (::inet_pton(AF_INET6, addr.c_str(), p.net.data()) != 1)
    throw std::invalid_argument("'" + addr + "' is not an IPv6 address");
  const std::string len = text.substr(slash + 1);
  static constexpr const char* kLengths[] = {"32", "40", "48", "56", "64", "96"};
  if (std::find_if(std::begin(kLengths), std::end(kLengths), [&](const char* l) { return len == l; }) ==
      std::end(kLengths))
    throw std::invalid_argument("prefix length '" + len + "' is not one of 32, 40, 48, 56, 64, 96 (RFC 6052 2.2)");
  p.length = static_cast<std::uint8_t>(std::stoi(len));
  for (std::size_t i = p.length / 8u; i < 16; ++i)
    if (p.net[i]) throw std::invalid_argument("'" + text + "' has bits set past its length");
  if (p.net[8]) throw std::invalid_argument("'" + text + "' has bits 64-71 set (RFC 6052 2.2: they must be zero)");
  return p;
}

Subnet parse_dns64_exclude(const std::string& text) {
  const Subnet s = Subnet::parse(text);
  if (s.family != AF_INET6) throw std::invalid_argument("'" + text + "' is not an IPv6 subnet");
  return s;
}

std::array<std::uint8_t, 16> embed_ipv4(const Dns64Prefix& prefix, const std::uint8_t* ipv4) {
  std::array<std::uint8_t, 16> a = prefix.net;  // the prefix, then zeros (u octet and suffix)
  const std::array<std::size_t, 4> at = ipv4_octets(prefix.length);
  for (std::size_t i = 0; i < 4; ++i) a[at[i]] = ipv4[i];
  return a;
}

bool extract_ipv4(const Dns64Prefix& prefix, const std::uint8_t* ipv6, std::uint8_t* ipv4) {
  if (std::memcmp(ipv6, prefix.net.data(), prefix.length / 8u) != 0) return false;
  const std::array<std::size_t, 4> at = ipv4_octets(prefix.length);
  for (std::size_t i = 0; i < 4; ++i) ipv4[i] = ipv6[at[i]];
  return true;
}

std::size_t ptr_ipv4_name(const Dns64Prefix& prefix, std::span<const std::uint8_t> qname, std::uint8_t* out) {
  // 32 one-nibble labels, then "ip6" "arpa" and the root: 64 + 4 + 5 + 1 bytes.
  if (qname.size() != 2 * kIpv6ArpaNibbles + 4 + 5 + 1) return 0;
  std::array<std::uint8_t, 16> addr{};
  const std::uint8_t* p = qname.data();
  for (std::size_t i = 0; i < kIpv6ArpaNibbles; ++i, p += 2) {
    const int v = p[0] == 1 ? hex_value(p[1]) : -1;
    if (v < 0) return 0;
    const std::size_t nibble = kIpv6ArpaNibbles - 1 - i;  // the first label is the lowest nibble
    addr[nibble / 2] |= static_cast<std::uint8_t>(nibble % 2 ? v : v << 4);
  }
  if (!label_is(p, "ip6") || !label_is(p + 4, "arpa") || p[9] != 0) return 0;
  std::uint8_t v4[4];
  if (!extract_ipv4(prefix, addr.data(), v4)) return 0;
  // Bits past the IPv4 address (the u octet and the suffix) are zero in every address
  // the prefix synthesizes: any other address under the prefix is not one of them.
  const std::array<std::uint8_t, 16> again = embed_ipv4(prefix, v4);
  if (again != addr) return 0;
  std::size_t n = 0;
  for (int i = 3; i >= 0; --i) {
    const std::string label = std::to_string(v4[i]);
    out[n++] = static_cast<std::uint8_t>(label.size());
    std::memcpy(out + n, label.data(), label.size());
    n += label.size();
  }
  static constexpr std::uint8_t kInAddrArpa[] = {7, 'i', 'n', '-', 'a', 'd', 'd', 'r', 4, 'a', 'r', 'p', 'a', 0};
  std::memcpy(out + n, kInAddrArpa, sizeof kInAddrArpa);
  return n + sizeof kInAddrArpa;
}

bool dns64_client(const Dns64Config& cfg, const sockaddr_storage& client) {
  if (cfg.clients.empty()) return true;
  int family = 0;
  const std::uint8_t* addr = nullptr;
  if (!ip_address_of(client, family, addr)) return false;
  return std::any_of(cfg.clients.begin(), cfg.clients.end(), [&](const Subnet& s) { return s.contains(family, addr); });
}

std::uint8_t dns64_key_flag(const Dns64Config& cfg, const dns::ClientQuery& q, const sockaddr_storage& client) {
  if (q.qtype != kTypeAaaa && q.qtype != kTypePtr) return 0;
  if (q.do_bit && q.cd()) return 0;  // RFC 6147 5.5: a validating client gets the real answer
  if (q.qtype == kTypePtr) {
    std::uint8_t name[kMaxNameWire];
    if (ptr_ipv4_name(cfg.prefix, q.qname(), name) == 0) return 0;
  }
  return dns64_client(cfg, client) ? cache::kKeyDns64 : 0;
}

AaaaVerdict inspect_aaaa_answer(const Dns64Config& cfg, const std::uint8_t* msg, std::size_t n) {
  AaaaVerdict v;
  if (n < kHeaderBytes || get16(msg + 4) != 1) return v;
  const std::uint16_t flags = get16(msg + 2);
  if ((flags & 0x000F) != kRcodeNoError || (flags & kFlagTc)) return v;  // NXDOMAIN, errors, TC: as they are
  const std::span<const std::uint8_t> m{msg, n};
  std::size_t at = skip_wire_name(m, kHeaderBytes);
  if (at == 0 || at + 4 > n) return v;
  at += 4;
  const unsigned answers = get16(msg + 6), authority = get16(msg + 8);
  bool real = false;
  for (unsigned i = 0; i < answers + authority; ++i) {
    at = skip_wire_name(m, at);
    if (at == 0 || at + kRecordFixedBytes > n) return {};
    const std::uint16_t type = get16(msg + at);
    const std::uint32_t ttl = std::uint32_t{get16(msg + at + 4)} << 16 | get16(msg + at + 6);
    const std::size_t rd = at + kRecordFixedBytes, rdend = rd + get16(msg + at + 8);
    if (rdend > n) return {};
    if (i < answers && type == kTypeAaaa && rdend - rd == 16) {
      const bool excluded = std::any_of(cfg.exclude.begin(), cfg.exclude.end(),
                                        [&](const Subnet& s) { return s.contains(AF_INET6, msg + rd); });
      if (!excluded) real = true;
    } else if (i >= answers && type == kTypeSoa && rdend - rd >= 20) {
      v.ttl_cap = std::min(ttl, std::uint32_t{get16(msg + rdend - 4)} << 16 | get16(msg + rdend - 2));  // TTL, MINIMUM
    }
    at = rdend;
  }
  v.synthesize = !real;
  return v;
}

}  // namespace dnsarena::workers

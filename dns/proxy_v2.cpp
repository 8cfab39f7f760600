// SPDX-License-Identifier: GPL-3.0-or-later
#include "dns/proxy_v2.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace dnsarena::dns {

namespace {

constexpr std::uint8_t kCommandLocal = 0x0, kCommandProxy = 0x1;
constexpr std::uint8_t kFamilyUnspec = 0x0, kFamilyInet = 0x1, kFamilyInet6 = 0x2;
constexpr std::uint8_t kTransportUnspec = 0x0, kTransportStream = 0x1, kTransportDgram = 0x2;
constexpr std::size_t kInetBlock = 12, kInet6Block = 36;
constexpr std::uint8_t kTlvNoop = 0x04;  // PP2_TYPE_NOOP

ProxyV2 malformed(ProxyV2::Malformed why) {
  ProxyV2 r;
  r.verdict = ProxyV2::Verdict::malformed;
  r.why = why;
  return r;
}

std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }

// The address block's source and destination as socket addresses.
void read_addresses(const std::uint8_t* block, std::uint8_t family, ProxyV2& r) {
  if (family == kFamilyInet) {
    auto* s = reinterpret_cast<sockaddr_in*>(&r.source);
    auto* d = reinterpret_cast<sockaddr_in*>(&r.destination);
    s->sin_family = d->sin_family = AF_INET;
    std::memcpy(&s->sin_addr, block, 4);
    std::memcpy(&d->sin_addr, block + 4, 4);
    std::memcpy(&s->sin_port, block + 8, 2);
    std::memcpy(&d->sin_port, block + 10, 2);
    r.source_len = sizeof(sockaddr_in);
  } else {
    auto* s = reinterpret_cast<sockaddr_in6*>(&r.source);
    auto* d = reinterpret_cast<sockaddr_in6*>(&r.destination);
    s->sin6_family = d->sin6_family = AF_INET6;
    std::memcpy(&s->sin6_addr, block, 16);
    std::memcpy(&d->sin6_addr, block + 16, 16);
    std::memcpy(&s->sin6_port, block + 32, 2);
    std::memcpy(&d->sin6_port, block + 34, 2);
    r.source_len = sizeof(sockaddr_in6);
  }
}

}  // namespace

ProxyV2 parse_proxy_v2(std::span<const std::uint8_t> bytes, ProxyV2Transport transport, bool whole) {
  const std::size_t sig = std::min(bytes.size(), kProxyV2Signature.size());
  if (sig == 0 || std::memcmp(bytes.data(), kProxyV2Signature.data(), sig) != 0) return {};
  if (bytes.size() < kProxyV2Prefix) {
    if (whole) return malformed(ProxyV2::Malformed::truncated);
    ProxyV2 r;
    r.verdict = ProxyV2::Verdict::incomplete;
    return r;
  }
  const std::uint8_t ver_cmd = bytes[12], fam = bytes[13];
  if ((ver_cmd >> 4) != 2) return malformed(ProxyV2::Malformed::version);
  const std::uint8_t command = ver_cmd & 0x0F;
  if (command != kCommandLocal && command != kCommandProxy) return malformed(ProxyV2::Malformed::command);
  const std::uint8_t family = fam >> 4, proto = fam & 0x0F;
  if (family > kFamilyInet6 || proto > kTransportDgram) return malformed(ProxyV2::Malformed::family);
  const std::size_t len = be16(bytes.data() + 14);
  if (kProxyV2Prefix + len > kProxyV2MaxHeader) return malformed(ProxyV2::Malformed::too_long);
  if (command == kCommandProxy) {
    if (family == kFamilyUnspec || proto == kTransportUnspec) return malformed(ProxyV2::Malformed::proxy_unspec);
    if (proto != (transport == ProxyV2Transport::stream ? kTransportStream : kTransportDgram))
      return malformed(ProxyV2::Malformed::transport);
  }
  const std::size_t block = family == kFamilyInet ? kInetBlock : family == kFamilyInet6 ? kInet6Block : 0;
  if (len < block) return malformed(ProxyV2::Malformed::short_addresses);
  if (bytes.size() < kProxyV2Prefix + len) {
    if (whole) return malformed(ProxyV2::Malformed::truncated);
    ProxyV2 r;
    r.verdict = ProxyV2::Verdict::incomplete;
    return r;
  }
  ProxyV2 r;
  const std::uint8_t* p = bytes.data() + kProxyV2Prefix + block;
  const std::uint8_t* const end = bytes.data() + kProxyV2Prefix + len;
  while (p < end) {
    if (end - p < 3) return malformed(ProxyV2::Malformed::tlv_overrun);
    const std::size_t value = be16(p + 1);
    if (static_cast<std::size_t>(end - p - 3) < value) return malformed(ProxyV2::Malformed::tlv_overrun);
    p += 3 + value;
    ++r.tlvs;
  }
  r.verdict = ProxyV2::Verdict::ok;
  r.length = kProxyV2Prefix + len;
  r.local = command == kCommandLocal;
  if (!r.local) read_addresses(bytes.data() + kProxyV2Prefix, family, r);
  return r;
}

const char* proxy_v2_malformed_name(ProxyV2::Malformed why) {
  switch (why) {
    case ProxyV2::Malformed::none: return "none";
    case ProxyV2::Malformed::version: return "version";
    case ProxyV2::Malformed::command: return "command";
    case ProxyV2::Malformed::family: return "family";
    case ProxyV2::Malformed::proxy_unspec: return "proxy_unspec";
    case ProxyV2::Malformed::transport: return "transport";
    case ProxyV2::Malformed::short_addresses: return "short_addresses";
    case ProxyV2::Malformed::too_long: return "too_long";
    case ProxyV2::Malformed::tlv_overrun: return "tlv_overrun";
    case ProxyV2::Malformed::truncated: return "truncated";
  }
  return "unknown";
}

std::vector<std::uint8_t> build_proxy_v2(const sockaddr_storage* source, const sockaddr_storage* destination,
                                         ProxyV2Transport transport, std::size_t tlv_padding) {
  std::vector<std::uint8_t> h(kProxyV2Signature.begin(), kProxyV2Signature.end());
  const std::uint8_t proto = transport == ProxyV2Transport::stream ? kTransportStream : kTransportDgram;
  std::vector<std::uint8_t> body;
  if (!source) {
    h.push_back(0x20 | kCommandLocal);
    h.push_back(static_cast<std::uint8_t>(kFamilyUnspec << 4));
  } else if (source->ss_family == AF_INET) {
    if (!destination || destination->ss_family != AF_INET) throw std::invalid_argument("build_proxy_v2: mixed families");
    const auto* s = reinterpret_cast<const sockaddr_in*>(source);
    const auto* d = reinterpret_cast<const sockaddr_in*>(destination);
    h.push_back(0x20 | kCommandProxy);
    h.push_back(static_cast<std::uint8_t>(kFamilyInet << 4 | proto));
    const auto* sa = reinterpret_cast<const std::uint8_t*>(&s->sin_addr);
    const auto* da = reinterpret_cast<const std::uint8_t*>(&d->sin_addr);
    const auto* sp = reinterpret_cast<const std::uint8_t*>(&s->sin_port);
    const auto* dp = reinterpret_cast<const std::uint8_t*>(&d->sin_port);
    body.insert(body.end(), sa, sa + 4);
    body.insert(body.end(), da, da + 4);
    body.insert(body.end(), sp, sp + 2);
    body.insert(body.end(), dp, dp + 2);
  } else if (source->ss_family == AF_INET6) {
    if (!destination || destination->ss_family != AF_INET6)
      throw std::invalid_argument("build_proxy_v2: mixed families");
    const auto* s = reinterpret_cast<const sockaddr_in6*>(source);
    const auto* d = reinterpret_cast<const sockaddr_in6*>(destination);
    h.push_back(0x20 | kCommandProxy);
    h.push_back(static_cast<std::uint8_t>(kFamilyInet6 << 4 | proto));
    const auto* sp = reinterpret_cast<const std::uint8_t*>(&s->sin6_port);
    const auto* dp = reinterpret_cast<const std::uint8_t*>(&d->sin6_port);
    body.insert(body.end(), s->sin6_addr.s6_addr, s->sin6_addr.s6_addr + 16);
    body.insert(body.end(), d->sin6_addr.s6_addr, d->sin6_addr.s6_addr + 16);
    body.insert(body.end(), sp, sp + 2);
    body.insert(body.end(), dp, dp + 2);
  } else {
    throw std::invalid_argument("build_proxy_v2: not an IPv4 or IPv6 address");
  }
  if (tlv_padding) {
    body.push_back(kTlvNoop);
    body.push_back(static_cast<std::uint8_t>(tlv_padding >> 8));
    body.push_back(static_cast<std::uint8_t>(tlv_padding));
    body.resize(body.size() + tlv_padding, 0);
  }
  h.push_back(static_cast<std::uint8_t>(body.size() >> 8));
  h.push_back(static_cast<std::uint8_t>(body.size()));
  h.insert(h.end(), body.begin(), body.end());
  return h;
}

}  // namespace dnsarena::dns

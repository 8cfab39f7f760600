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

socklen_t socket_address(sa_family_t family, const std::array<std::uint8_t, 16>& addr,
                         const std::array<std::uint8_t, 2>& port, sockaddr_storage& out) {
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&out);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_port, port.data(), 2);
    std::memcpy(&a->sin_addr, addr.data(), 4);
    std::memset(a->sin_zero, 0, sizeof a->sin_zero);
    return sizeof(sockaddr_in);
  }
  auto* a = reinterpret_cast<sockaddr_in6*>(&out);
  a->sin6_family = AF_INET6;
  std::memcpy(&a->sin6_port, port.data(), 2);
  a->sin6_flowinfo = 0;
  std::memcpy(&a->sin6_addr, addr.data(), 16);
  a->sin6_scope_id = 0;
  return sizeof(sockaddr_in6);
}

std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }

// The address block (INET: 4 + 4 + 2 + 2 bytes, INET6: 16 + 16 + 2 + 2).
void read_addresses(const std::uint8_t* block, std::uint8_t family, ProxyV2& r) {
  const std::size_t n = family == kFamilyInet ? 4 : 16;
  r.family = family == kFamilyInet ? AF_INET : AF_INET6;
  std::memcpy(r.source_addr.data(), block, n);
  std::memcpy(r.destination_addr.data(), block + n, n);
  std::memcpy(r.source_port.data(), block + 2 * n, 2);
  std::memcpy(r.destination_port.data(), block + 2 * n + 2, 2);
}

}  // namespace

// One result object, returned on every path: NRVO builds it in the caller's slot (with
// a result per path, it was built on the stack and copied out: 46 bytes a datagram).
ProxyV2 parse_proxy_v2(std::span<const std::uint8_t> bytes, ProxyV2Transport transport, bool whole) {
  ProxyV2 r;
  const auto fail = [&r](ProxyV2::Malformed why) {
    r.verdict = ProxyV2::Verdict::malformed;
    r.why = why;
  };
  const std::size_t sig = std::min(bytes.size(), kProxyV2Signature.size());
  if (sig == 0 || std::memcmp(bytes.data(), kProxyV2Signature.data(), sig) != 0) return r;  // not_proxy
  const std::size_t len = bytes.size() >= kProxyV2Prefix ? be16(bytes.data() + 14) : 0;
  const std::uint8_t ver_cmd = bytes.size() >= kProxyV2Prefix ? bytes[12] : 0, fam = bytes.size() >= kProxyV2Prefix ? bytes[13] : 0;
  const std::uint8_t command = ver_cmd & 0x0F, family = fam >> 4, proto = fam & 0x0F;
  const std::size_t block = family == kFamilyInet ? kInetBlock : family == kFamilyInet6 ? kInet6Block : 0;
  if (bytes.size() < kProxyV2Prefix) {
    if (whole) fail(ProxyV2::Malformed::truncated);
    else r.verdict = ProxyV2::Verdict::incomplete;
  } else if ((ver_cmd >> 4) != 2) {
    fail(ProxyV2::Malformed::version);
  } else if (command != kCommandLocal && command != kCommandProxy) {
    fail(ProxyV2::Malformed::command);
  } else if (family > kFamilyInet6 || proto > kTransportDgram) {
    fail(ProxyV2::Malformed::family);
  } else if (kProxyV2Prefix + len > kProxyV2MaxHeader) {
    fail(ProxyV2::Malformed::too_long);
  } else if (command == kCommandProxy && (family == kFamilyUnspec || proto == kTransportUnspec)) {
    fail(ProxyV2::Malformed::proxy_unspec);
  } else if (command == kCommandProxy &&
             proto != (transport == ProxyV2Transport::stream ? kTransportStream : kTransportDgram)) {
    fail(ProxyV2::Malformed::transport);
  } else if (len < block) {
    fail(ProxyV2::Malformed::short_addresses);
  } else if (bytes.size() < kProxyV2Prefix + len) {
    if (whole) fail(ProxyV2::Malformed::truncated);
    else r.verdict = ProxyV2::Verdict::incomplete;
  } else {
    const std::uint8_t* p = bytes.data() + kProxyV2Prefix + block;
    const std::uint8_t* const end = bytes.data() + kProxyV2Prefix + len;
    while (p < end) {
      if (end - p < 3 || static_cast<std::size_t>(end - p - 3) < be16(p + 1)) {
        fail(ProxyV2::Malformed::tlv_overrun);
        return r;
      }
      p += 3 + be16(p + 1);
      ++r.tlvs;
    }
    r.verdict = ProxyV2::Verdict::ok;
    r.length = static_cast<std::uint16_t>(kProxyV2Prefix + len);
    r.local = command == kCommandLocal;
    if (!r.local) read_addresses(bytes.data() + kProxyV2Prefix, family, r);
  }
  return r;
}

socklen_t ProxyV2::source(sockaddr_storage& out) const {
  return socket_address(family, source_addr, source_port, out);
}

socklen_t ProxyV2::destination(sockaddr_storage& out) const {
  return socket_address(family, destination_addr, destination_port, out);
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
  std::vector<std::uint8_t> body;
  if (!source) {
    h.push_back(0x20 | kCommandLocal);
    h.push_back(static_cast<std::uint8_t>(kFamilyUnspec << 4));
  } else {
    const sa_family_t family = source->ss_family;
    if (family != AF_INET && family != AF_INET6)
      throw std::invalid_argument("build_proxy_v2: not an IPv4 or IPv6 address");
    if (!destination || destination->ss_family != family) throw std::invalid_argument("build_proxy_v2: mixed families");
    const std::uint8_t proto = transport == ProxyV2Transport::stream ? kTransportStream : kTransportDgram;
    h.push_back(0x20 | kCommandProxy);
    h.push_back(static_cast<std::uint8_t>((family == AF_INET ? kFamilyInet : kFamilyInet6) << 4 | proto));
    // The address block: both addresses, then both ports.
    const auto append = [&body](const void* p, std::size_t n) {
      body.insert(body.end(), static_cast<const std::uint8_t*>(p), static_cast<const std::uint8_t*>(p) + n);
    };
    for (const sockaddr_storage* a : {source, destination}) {
      if (family == AF_INET) append(&reinterpret_cast<const sockaddr_in*>(a)->sin_addr, 4);
      else append(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, 16);
    }
    for (const sockaddr_storage* a : {source, destination}) {
      if (family == AF_INET) append(&reinterpret_cast<const sockaddr_in*>(a)->sin_port, 2);
      else append(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_port, 2);
    }
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

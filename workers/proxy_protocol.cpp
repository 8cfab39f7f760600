// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/proxy_protocol.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <spdlog/spdlog.h>

#include "dns/proxy_v2.hpp"

namespace dnsarena::workers {

namespace {

// The first byte rejects all but 1 in 256 DNS queries (their ID's high byte) at once.
bool starts_with_signature(const std::uint8_t* p, std::size_t len) {
  return len >= dns::kProxyV2Signature.size() && p[0] == dns::kProxyV2Signature[0] &&
         std::memcmp(p, dns::kProxyV2Signature.data(), dns::kProxyV2Signature.size()) == 0;
}

}  // namespace

ProxyGate::ProxyGate(const std::vector<Subnet>& sources, AnswerMeter& meter) : sources_(sources), meter_(meter) {
  for (const Subnet& s : sources)
    if (s.family == AF_INET) {
      std::uint32_t net;
      std::memcpy(&net, s.net.data(), 4);
      const std::uint32_t mask = s.prefix ? htonl(~std::uint32_t{0} << (32 - s.prefix)) : 0;
      v4_.push_back({net, mask});
    }
}

bool ProxyGate::listed_slow(const sockaddr_storage& peer) const {
  if (peer.ss_family != AF_INET6) return false;
  const in6_addr& a6 = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {
    std::uint32_t v4;
    std::memcpy(&v4, a6.s6_addr + 12, 4);
    return listed_v4(v4);
  }
  for (const Subnet& s : sources_)
    if (s.contains(AF_INET6, a6.s6_addr)) return true;
  return false;
}

unsigned ProxyGate::strip_udp(const UdpBatch& b, unsigned n) {
  unsigned kept = 0;
  for (unsigned i = 0; i < n; ++i) {
    std::uint8_t* bytes = b.data + i * b.stride;
    const std::size_t len = b.msgs[i].msg_len;
    std::size_t header = 0;
    const sockaddr_storage* client = &b.peers[kept];  // where peers[i] lands
    // The common case first: an unlisted client's query (not a header: its first byte).
    if (listed(b.peers[i])) {
      const dns::ProxyV2 h = dns::parse_proxy_v2({bytes, len}, dns::ProxyV2Transport::dgram, true);
      if (h.verdict != dns::ProxyV2::Verdict::ok) {
        dropped_udp(h);
        continue;
      }
      header = h.length;
      if (h.local) {
        count(ProxyOutcome::local);
      } else {
        count(ProxyOutcome::accepted);
        h.source(b.carried[kept]);
        client = &b.carried[kept];
      }
    } else if (starts_with_signature(bytes, len)) {
      count(ProxyOutcome::unlisted);
      continue;
    }
    // Datagram i becomes slot `kept`, its query at the start of the slot.
    if (header || kept != i) {
      std::memmove(b.data + kept * b.stride, bytes + header, len - header);
      b.msgs[kept].msg_len = static_cast<unsigned>(len - header);
      b.msgs[kept].msg_hdr.msg_namelen = b.msgs[i].msg_hdr.msg_namelen;
      if (kept != i) {
        b.peers[kept] = b.peers[i];
        if (b.locals) b.locals[kept] = b.locals[i];
      }
    }
    b.client[kept] = client;
    ++kept;
  }
  return kept;
}

void ProxyGate::dropped_udp(const dns::ProxyV2& h) {
  if (h.verdict == dns::ProxyV2::Verdict::not_proxy) {
    count(ProxyOutcome::no_header);
    return;
  }
  count(ProxyOutcome::malformed);
  spdlog::debug("proxy: malformed header over UDP: {}", dns::proxy_v2_malformed_name(h.why));
}

ProxyGate::StreamStart ProxyGate::stream_start(const sockaddr_storage& peer, std::span<const std::uint8_t> bytes) {
  StreamStart s;
  if (!listed(peer)) {
    // A prefix of the signature may still become a header: wait for 12 bytes to tell.
    const dns::ProxyV2 h = dns::parse_proxy_v2(bytes.first(std::min(bytes.size(), dns::kProxyV2Signature.size())),
                                               dns::ProxyV2Transport::stream, false);
    if (h.verdict == dns::ProxyV2::Verdict::not_proxy) {
      s.kind = StreamStart::Kind::pass;
    } else if (bytes.size() >= dns::kProxyV2Signature.size()) {
      count(ProxyOutcome::unlisted);
      s.kind = StreamStart::Kind::drop;
    }
    return s;
  }
  const dns::ProxyV2 h = dns::parse_proxy_v2(bytes, dns::ProxyV2Transport::stream, false);
  switch (h.verdict) {
    case dns::ProxyV2::Verdict::incomplete: return s;
    case dns::ProxyV2::Verdict::not_proxy:
      count(ProxyOutcome::no_header);
      s.kind = StreamStart::Kind::drop;
      return s;
    case dns::ProxyV2::Verdict::malformed:
      count(ProxyOutcome::malformed);
      spdlog::debug("proxy: malformed header on a stream: {}", dns::proxy_v2_malformed_name(h.why));
      s.kind = StreamStart::Kind::drop;
      return s;
    case dns::ProxyV2::Verdict::ok: break;
  }
  s.kind = StreamStart::Kind::pass;
  s.header = h.length;
  if (h.local) {
    count(ProxyOutcome::local);
  } else {
    count(ProxyOutcome::accepted);
    s.carried = true;
    h.source(s.client);
  }
  return s;
}

}  // namespace dnsarena::workers

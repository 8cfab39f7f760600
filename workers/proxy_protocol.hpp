// SPDX-License-Identifier: GPL-3.0-or-later
// PROXY protocol v2 in front of the listeners (`proxy_protocol_from`, serve_config.hpp):
// which sources must send a header, what happens to their queries and to headers from
// anyone else, for one worker. The header's bytes are read by dns/proxy_v2.hpp.
//
// Rules (Unbound's proxy-protocol-port, PowerDNS Recursor's proxy-protocol-from):
//   a listed source (a balancer)   every UDP datagram, and the start of every TCP, DoT and
//                                  DoH connection (before TLS, as haproxy sends it), must
//                                  carry a valid header. PROXY: the client address it
//                                  carries replaces the source everywhere the source is
//                                  used (access control, rate limit, cookies, ECS from the
//                                  source, dnstap, rpz-client-ip, the per-client TCP
//                                  bound); the answer still goes to the balancer, without
//                                  a header. LOCAL: the balancer's own address stands.
//                                  No header, or a malformed one: dropped (a stream:
//                                  closed), counted no_header / malformed.
//   any other source               queries as always; a datagram or a connection that
//                                  starts with the 12-byte signature is dropped (never
//                                  read as DNS), counted unlisted.
//
// Costs: off (no source listed), the UDP path pays one predictable branch per batch and
// streams nothing. On, per datagram: a scan of the listed IPv4 subnets as masks (at most
// kMaxProxySources, serve_config.hpp) and a first-byte test for the signature (a plain
// query: +55 instructions per UDP hit); from a balancer, the parse and a memmove of the
// query over the header (+180 per hit, about 1% of a hit's CPU with the kernel's share:
// docs/benchmarking.md, bench/proxy_cost.sh). A datagram dropped from the middle of a
// batch moves those after it down one slot. Per connection: at most 1 KiB buffered until
// the verdict (the header is at most 512 bytes), held no longer than the idle timeout
// (the sweep closes a connection that never completes its header); a TLS handshake's
// own timeout runs from the accept, header included.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dns/proxy_v2.hpp"
#include "workers/answer_metrics.hpp"
#include "workers/subnet.hpp"
#include "workers/udp_pktinfo.hpp"

struct mmsghdr;

namespace dnsarena::workers {

class ProxyGate {
  // The IPv4 subnets as masks (network order): a datagram's test is an AND and a compare each.
  struct V4Net {
    std::uint32_t net, mask;
  };

public:
  // `sources`: the config's proxy_protocol_from (empty: off); `meter`: the worker's row,
  // where the outcomes are counted (proxy_counts.hpp). Both outlive the gate.
  ProxyGate(const std::vector<Subnet>& sources, AnswerMeter& meter);
  bool enabled() const { return !sources_.empty(); }
  // Whether `peer` must send a header (IPv4-mapped IPv6 is matched as IPv4). Inline: it
  // runs for every datagram while the gate is on.
  bool listed(const sockaddr_storage& peer) const {
    if (peer.ss_family == AF_INET) return listed_v4(reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr.s_addr);
    return listed_slow(peer);
  }

  // A received UDP batch, as the worker holds it: datagram i's bytes at data + i x stride
  // (msgs[i].msg_len of them), its source peers[i], its local address locals[i]
  // (nullptr: the socket has none); carried[i] is room for a client address, client[i]
  // where the pipeline reads datagram i's client address from.
  struct UdpBatch {
    std::uint8_t* data;
    std::size_t stride;
    mmsghdr* msgs;
    sockaddr_storage* peers;
    LocalAddress* locals;
    sockaddr_storage* carried;
    const sockaddr_storage** client;
  };
  // Applies the rules to the n datagrams: each kept one has its header removed (its query
  // moved to the start of its slot, msg_len shortened) and client[i] set (carried[i], or
  // peers[i] when it carried none); the dropped ones are counted and removed, those after
  // them moved down (bytes, msg_len, msg_namelen, peer, local). Returns how many are kept
  // (the first ones of the batch now).
  unsigned strip_udp(const UdpBatch& b, unsigned n);

  // A connection's first bytes (all received so far) from `peer`.
  struct StreamStart {
    enum class Kind : std::uint8_t { wait, pass, drop } kind = Kind::wait;
    std::size_t header = 0;         // pass: the header's bytes to remove from the front
    bool carried = false;           // pass: `client` is the client's (a PROXY header)
    sockaddr_storage client{};
  };
  StreamStart stream_start(const sockaddr_storage& peer, std::span<const std::uint8_t> bytes);

private:
  void count(ProxyOutcome o) { meter_.proxy(o); }
  bool listed_v4(std::uint32_t addr) const {
    for (const V4Net& n : v4_)
      if ((addr & n.mask) == n.net) return true;
    return false;
  }
  bool listed_slow(const sockaddr_storage& peer) const;  // IPv6 (and IPv4-mapped)
  void dropped_udp(const dns::ProxyV2& h);                // counted (and logged at debug)

  const std::vector<Subnet>& sources_;
  std::vector<V4Net> v4_;
  AnswerMeter& meter_;
};

}  // namespace dnsarena::workers

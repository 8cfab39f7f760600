// SPDX-License-Identifier: GPL-3.0-or-later
// Answering from the address asked on a wildcard UDP socket (0.0.0.0 or ::).
//
// A socket bound to one address sends from that address. A socket bound to the wildcard
// receives for every local address, and a plain sendto() would take the source the
// routing table picks: a client that asked 127.0.0.2 (or one of several addresses on an
// interface) would get the answer from another address, and a connected client socket
// or a NAT drops it. So on wildcard sockets only (enable_pktinfo) the kernel attaches the
// datagram's destination to each receive (IP_PKTINFO / IPV6_RECVPKTINFO, read with
// read_local_address), and the answer names it as its source (IP_PKTINFO's ipi_spec_dst,
// IPV6_PKTINFO's ipi6_addr: write_reply_source), as Unbound's interface-automatic does.
// Sockets bound to one address pass no control buffer at all: their hot path is unchanged.
//
// Costs: one control message (at most kPktinfoControlBytes) per datagram each way.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace dnsarena::workers {

// The local address a datagram was sent to. family AF_UNSPEC: none known (a socket bound
// to one address, or no control message): the answer goes out without one.
struct LocalAddress {
  sa_family_t family = AF_UNSPEC;
  unsigned ifindex = 0;  // IPv6: the interface it came in on (a link-local address needs it)
  in_addr v4{};
  in6_addr v6{};
};

// Room for one IP_PKTINFO or IPV6_PKTINFO control message.
inline constexpr std::size_t kPktinfoControlBytes = CMSG_SPACE(sizeof(in6_pktinfo));
static_assert(kPktinfoControlBytes >= CMSG_SPACE(sizeof(in_pktinfo)), "one buffer holds either family's pktinfo");

// A control buffer aligned as cmsghdr requires.
struct alignas(cmsghdr) PktinfoControl {
  unsigned char bytes[kPktinfoControlBytes];
};

// Asks the kernel for each datagram's destination on `fd` (family AF_INET or AF_INET6).
// False (errno set) when the socket refuses.
bool enable_pktinfo(int fd, int family);

// The destination `msg` (filled by recvmsg/recvmmsg with a control buffer) was sent to.
LocalAddress read_local_address(const msghdr& msg);

// Points `msg` at `control`, holding a control message that sends from `local`; no
// control message when local.family is AF_UNSPEC (msg_control nullptr).
void write_reply_source(const LocalAddress& local, PktinfoControl& control, msghdr& msg);

}  // namespace dnsarena::workers

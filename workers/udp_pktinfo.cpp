// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/udp_pktinfo.hpp"

#include <cstring>

namespace dnsarena::workers {

bool enable_pktinfo(int fd, int family) {
  const int one = 1;
  if (family == AF_INET6) return ::setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) == 0;
  return ::setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) == 0;
}

LocalAddress read_local_address(const msghdr& msg) {
  LocalAddress local;
  if (msg.msg_control == nullptr) return local;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO && c->cmsg_len >= CMSG_LEN(sizeof(in_pktinfo))) {
      in_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      local.family = AF_INET;
      local.v4 = info.ipi_addr;  // the header's destination: the address the client asked
      return local;
    }
    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
        c->cmsg_len >= CMSG_LEN(sizeof(in6_pktinfo))) {
      in6_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      local.family = AF_INET6;
      local.v6 = info.ipi6_addr;
      local.ifindex = info.ipi6_ifindex;
      return local;
    }
  }
  return local;
}

namespace {

// One control message (level, type, info) as msg's whole control data.
template <class Info>
void put_control(int level, int type, const Info& info, msghdr& msg) {
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = level;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(sizeof info);
  std::memcpy(CMSG_DATA(c), &info, sizeof info);
  msg.msg_controllen = CMSG_SPACE(sizeof info);
}

}  // namespace

void write_reply_source(const LocalAddress& local, PktinfoControl& control, msghdr& msg) {
  if (local.family == AF_UNSPEC) {
    msg.msg_control = nullptr;
    msg.msg_controllen = 0;
    return;
  }
  std::memset(control.bytes, 0, sizeof control.bytes);
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof control.bytes;
  if (local.family == AF_INET) {
    // ipi_spec_dst is the source address; ifindex 0 lets routing pick the interface.
    in_pktinfo info{};
    info.ipi_spec_dst = local.v4;
    put_control(IPPROTO_IP, IP_PKTINFO, info, msg);
  } else {
    in6_pktinfo info{};
    info.ipi6_addr = local.v6;
    info.ipi6_ifindex = local.ifindex;
    put_control(IPPROTO_IPV6, IPV6_PKTINFO, info, msg);
  }
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/client_reply.hpp"

#include "common/monotonic_clock.hpp"
#include "workers/udp_pktinfo.hpp"

namespace dnsarena::workers {

void ClientReplies::send(const Waiter& w, const std::uint8_t* out, std::size_t n) {
  if (n == 0) return;
  answers_.answered(out, n, AnswerKind::miss, (common::monotonic_us() - w.arrived_us) * 1000);
  if (tap_) {
    const sockaddr_storage stream_local = w.tcp ? local_of(w.conn_id, w.doh_stream) : sockaddr_storage{};
    tap_->client_response(w.tcp ? peer_of(w.conn_id, w.doh_stream) : w.client_address(),
                          w.tcp ? TapLocal{nullptr, nullptr, &stream_local} : tap_local(w.udp_socket, &w.local),
                          w.tcp ? stream_protocol(w.conn_id, w.doh_stream) : TapProtocol::udp,
                          {out, n}, nullptr);
  }
  if (w.tcp) {
    send_stream(w.conn_id, w.doh_stream, {out, n});
    return;
  }
  const int fd = udp_[w.udp_socket].fd;
  if (w.local.family == AF_UNSPEC) {
    ::sendto(fd, out, n, 0, reinterpret_cast<const sockaddr*>(&w.addr), w.addr_len);
    return;
  }
  iovec iov{const_cast<std::uint8_t*>(out), n};
  msghdr h{};
  h.msg_name = const_cast<sockaddr_storage*>(&w.addr);
  h.msg_namelen = w.addr_len;
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  PktinfoControl control;
  write_reply_source(w.local, control, h);
  ::sendmsg(fd, &h, 0);
}

void ClientReplies::send_stream(std::uint64_t conn_id, std::uint32_t doh_stream, std::span<const std::uint8_t> answer) {
  if (doh_stream) doh_.send(conn_id, doh_stream, answer);
  else stream(conn_id).send(conn_id, answer);
}

sockaddr_storage ClientReplies::peer_of(std::uint64_t conn_id, std::uint32_t doh_stream) const {
  return doh_stream ? doh_.peer(conn_id) : stream(conn_id).peer(conn_id);
}

sockaddr_storage ClientReplies::local_of(std::uint64_t conn_id, std::uint32_t doh_stream) const {
  return doh_stream ? doh_.local(conn_id) : stream(conn_id).local(conn_id);
}

}  // namespace dnsarena::workers

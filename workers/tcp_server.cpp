// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/tcp_server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>

#include "common/monotonic_clock.hpp"
#include "dns/edns_padding.hpp"
#include "workers/proxy_protocol.hpp"

namespace dnsarena::workers {

namespace {
constexpr std::uint64_t kIdMask = (1ull << 48) - 1;
constexpr std::size_t kReadSize = 16384;
constexpr int kReadsPerEvent = 4;  // then back to the loop: one client cannot hold the worker
constexpr int kMaxIov = 64;
constexpr std::size_t kMaxMessage = 65535;

using common::monotonic_ms;
}  // namespace

std::size_t TcpServer::ClientKeyHash::operator()(const ClientKey& k) const {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (const std::uint8_t b : k.bytes) h = (h ^ b) * 0x100000001b3ull;
  return static_cast<std::size_t>(h);
}

TcpServer::ClientKey TcpServer::client_key(const sockaddr_storage& peer) {
  ClientKey k;
  if (peer.ss_family == AF_INET) {
    k.bytes[0] = 4;
    std::memcpy(&k.bytes[1], &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      k.bytes[0] = 4;
      std::memcpy(&k.bytes[1], a.s6_addr + 12, 4);
    } else {
      k.bytes[0] = 6;
      std::memcpy(&k.bytes[1], a.s6_addr, 8);
    }
  }
  return k;
}

TcpServer::TcpServer(int epoll_fd, std::vector<int> listen_fds, std::uint64_t listen_tag, std::uint64_t tag,
                     const TcpLimits& limits, Handler handler, const TlsServerSettings* tls)
    : epoll_fd_(epoll_fd),
      listen_fds_(std::move(listen_fds)),
      listen_tag_(listen_tag),
      tag_(tag),
      limits_(limits),
      handler_(std::move(handler)),
      msg_(kMaxMessage),
      tls_(tls) {
  if (tls_) framed_.resize(2 + kMaxMessage);
}

TcpServer::~TcpServer() {
  for (auto& [id, c] : conns_) {
    if (c.tls) gnutls_deinit(c.tls);
    ::close(c.fd);
  }
}

TcpServer::Conn* TcpServer::find(std::uint64_t id) {
  auto it = conns_.find(id & kIdMask);
  return it == conns_.end() ? nullptr : &it->second;
}

void TcpServer::progress(Conn& c, std::uint64_t now) {
  c.last_progress_ms = now;
  lru_.splice(lru_.end(), lru_, c.lru);
}

void TcpServer::pause_accept() {
  const int err = errno;
  // DEL, not MOD: EPOLL_CTL_MOD refuses an EPOLLEXCLUSIVE registration (EINVAL).
  for (int fd : listen_fds_)
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr) == 0) accept_paused_ = true;
  spdlog::warn("tcp: accept: {} ({} connections open); not accepting until the next sweep", std::strerror(err),
               conns_.size());
}

void TcpServer::on_accept(std::size_t listener, std::uint64_t now) {
  if (accept_paused_ || listener >= listen_fds_.size()) return;
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    const int fd = ::accept4(listen_fds_[listener], reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or kernel memory: the pending connection stays readable, so a
      // level-triggered listener would fire again at once. Stop watching it for a while.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accept();
      return;  // EAGAIN, or another error: try at the next event
    }
    // Answers go out as they are ready: without this, Nagle holds a pipelined query's
    // answer behind the previous one's unacknowledged bytes (the client's delayed ACK, up
    // to 40 ms).
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const ClientKey key = client_key(peer);
    // A balancer's connections are bounded per client once its header names the client.
    const bool balancer = proxy_ && proxy_->listed(peer);
    if (limits_.max_per_client && !balancer) {
      auto it = per_client_.find(key);
      if (it != per_client_.end() && it->second >= limits_.max_per_client) {
        ::close(fd);
        continue;
      }
    }
    if (tls_ && handshakes_.size() >= tls_->max_handshakes) close_conn(handshakes_.front());
    if (conns_.size() >= limits_.max_connections && !lru_.empty()) close_conn(lru_.front());
    const std::uint64_t id = (next_id_++ & kIdMask & ~kTlsConnBit) | (tls_ ? kTlsConnBit : 0);
    gnutls_session_t session = nullptr;
    if (tls_ && !(session = new_server_session(fd, *tls_))) {
      ::close(fd);
      continue;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = tag_ | id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      if (session) gnutls_deinit(session);
      ::close(fd);
      continue;
    }
    Conn& c = conns_[id];
    c.fd = fd;
    c.peer = peer;
    c.client = key;
    c.events = ev.events;
    c.last_progress_ms = now;
    c.accepted_ms = now;
    c.lru = lru_.insert(lru_.end(), id);
    c.proxy_pending = proxy_ != nullptr;
    c.client_counted = !balancer;
    if (!balancer) ++per_client_[key];
    if (session) {
      c.tls = session;
      gnutls_transport_set_ptr(session, &c);  // conns_ is node-based: &c lives as long as c
      gnutls_transport_set_pull_function(session, tls_pull);
      gnutls_transport_set_pull_timeout_function(session, tls_pull_timeout);
      gnutls_transport_set_vec_push_function(session, tls_push);
      c.handshaking = true;
      c.hs = handshakes_.insert(handshakes_.end(), id);
    }
  }
}

void TcpServer::close_conn(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  if (protocol_) protocol_->on_close(id);
  if (c.tls) {
    if (c.handshaking) handshakes_.erase(c.hs);
    gnutls_deinit(c.tls);
  }
  ::close(c.fd);
  lru_.erase(c.lru);
  auto pc = c.client_counted ? per_client_.find(c.client) : per_client_.end();
  if (pc != per_client_.end() && --pc->second == 0) per_client_.erase(pc);
  conns_.erase(it);
}

void TcpServer::on_event(std::uint64_t conn_id, std::uint32_t events, std::uint64_t now) {
  const std::uint64_t id = conn_id & kIdMask;
  Conn* c = find(id);
  if (!c) return;
  // EPOLLHUP and EPOLLERR are reported even when not asked for: with nothing more to
  // exchange, close now rather than spin on them while paused.
  if (events & (EPOLLERR | EPOLLHUP)) {
    close_conn(id);
    return;
  }
  c->drained = false;
  if (c->proxy_pending && !proxy_preamble(id, *c)) return;
  if (c->handshaking && (!handshake(id, *c, now) || c->handshaking)) return;
  c->resume_pending = false;
  if (c->out_bytes && !flush(id, *c)) return;
  if (!settle(id, *c)) return;  // output drained below the resume mark: read again now
  if (!c->paused && !c->eof) {
    c->resume_pending = false;  // the buffered input is handled right here
    if (c->tls) tls_batch_id_ = id;
    read_input(id);
    if (tls_batch_id_) flush_tls_batch();
  }
  if ((c = find(id))) settle(id, *c);
}

void TcpServer::flush_tls_batch() {
  const std::uint64_t id = tls_batch_id_;
  tls_batch_id_ = 0;
  if (tls_batch_.empty()) return;
  if (Conn* c = find(id)) write_tls_batch(id, *c);
  tls_batch_.clear();  // the connection is gone: nothing to write to
  if (tls_batch_.capacity() > 4 * kMaxMessage) tls_batch_.shrink_to_fit();
}

int TcpServer::write_tls_batch(std::uint64_t id, Conn& c) {
  const int written = write_or_queue(id, c, tls_batch_);
  tls_batch_.clear();
  if (written == 1) progress(c, monotonic_ms());
  return written;
}

void TcpServer::read_input(std::uint64_t id) {
  // The bound per event is kReadsPerEvent reads of up to kReadSize bytes. Over TLS a read
  // returns one record, often one small query: the same bound in bytes instead.
  std::size_t bytes = 0;
  for (int reads = 0;; ++reads) {
    if (!process_input(id)) return;
    Conn* c = find(id);
    if (c->paused) return;
    if (c->tls ? bytes >= kReadsPerEvent * kReadSize : reads == kReadsPerEvent) {
      // A socket with more bytes fires again; bytes GnuTLS or tls_pull already hold do not.
      if (tls_pending(*c)) c->resume_pending = true;
      return;
    }
    // What is left is less than one message: move it to the front before appending.
    if (c->in_off) {
      c->in.erase(c->in.begin(), c->in.begin() + static_cast<long>(c->in_off));
      c->in_off = 0;
    }
    std::uint8_t buf[kReadSize];
    const ssize_t n = stream_recv(*c, buf, sizeof buf);
    if (n > 0) {
      c->in.insert(c->in.end(), buf, buf + n);
      bytes += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c->eof = true;  // EOF or a socket error: nothing more will come
    return;
  }
}

bool TcpServer::process_input(std::uint64_t id) {
  if (protocol_) {
    Conn* c = find(id);
    return c && protocol_input(id, *c);
  }
  for (;;) {
    Conn* c = find(id);
    if (!c) return false;
    std::vector<std::uint8_t>& in = c->in;
    const std::size_t avail = in.size() - c->in_off;
    const std::size_t len = avail >= 2 ? (std::size_t{in[c->in_off]} << 8) | in[c->in_off + 1] : 0;
    if (c->paused || avail < 2 || avail - 2 < len) {
      // The tail (less than one message, or what a pause left) stays; read_input moves
      // it to the front before the next read.
      if (c->in_off == in.size()) {
        in.clear();
        c->in_off = 0;
        if (in.capacity() > 2 * kReadSize) in.shrink_to_fit();
      }
      return true;
    }
    // A copy: the handler may close this connection (a failed send) and free `in`.
    std::memcpy(msg_.data(), in.data() + c->in_off + 2, len);
    c->in_off += 2 + len;
    progress(*c, monotonic_ms());
    if (++c->in_flight >= kTcpMaxPipeline) c->paused = true;  // the handler's answer may resume it
    handler_(id, msg_.data(), len);
  }
}

void TcpServer::send(std::uint64_t conn_id, std::span<const std::uint8_t> msg) {
  const std::uint64_t id = conn_id & kIdMask;
  Conn* c = find(id);
  if (!c || msg.size() > kMaxMessage) return;
  if (c->in_flight) --c->in_flight;
  if (c->tls) {
    send_tls(id, *c, msg);
    return;
  }
  const std::uint8_t prefix[2] = {static_cast<std::uint8_t>(msg.size() >> 8), static_cast<std::uint8_t>(msg.size())};
  std::size_t done = 0;  // bytes of prefix + msg already written
  if (c->out_bytes == 0) {
    // Nothing queued: write straight from the caller's buffer, and allocate only for
    // what the socket does not take (a client that reads costs no allocation).
    iovec iov[2] = {{const_cast<std::uint8_t*>(prefix), 2}, {const_cast<std::uint8_t*>(msg.data()), msg.size()}};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = 2;
    ssize_t w;
    do w = ::sendmsg(c->fd, &mh, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      close_conn(id);
      return;
    }
    done = w > 0 ? static_cast<std::size_t>(w) : 0;
    if (done == 2 + msg.size()) {
      progress(*c, monotonic_ms());
      settle(id, *c);
      return;
    }
  }
  std::vector<std::uint8_t> rest(2 + msg.size() - done);
  std::uint8_t* p = rest.data();
  if (done < 2) p = std::copy(prefix + done, prefix + 2, p);
  const std::size_t from = done > 2 ? done - 2 : 0;
  std::memcpy(p, msg.data() + from, msg.size() - from);
  c->out_bytes += rest.size();
  c->out.push_back(std::move(rest));
  // Queued behind earlier output: write what the socket takes now. After a short direct
  // write the socket is full: EPOLLOUT (settle) resumes.
  if (done == 0 && c->out.size() > 1 && !flush(id, *c)) return;
  settle(id, *c);
}

bool TcpServer::flush(std::uint64_t id, Conn& c) {
  while (c.tls && c.out_bytes) {
    // One answer a record; after GNUTLS_E_AGAIN the same bytes are offered again.
    const std::vector<std::uint8_t>& front = c.out.front();
    const ssize_t w = stream_send(c, front.data() + c.out_off, front.size() - c.out_off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return true;
    if (w <= 0) {
      close_conn(id);
      return false;
    }
    c.out_bytes -= static_cast<std::size_t>(w);
    c.out_off += static_cast<std::size_t>(w);
    if (c.out_off == front.size()) {
      c.out.pop_front();
      c.out_off = 0;
      if (!protocol_) progress(c, monotonic_ms());
    }
  }
  while (c.out_bytes) {
    iovec iov[kMaxIov];
    int n = 0;
    for (auto it = c.out.begin(); it != c.out.end() && n < kMaxIov; ++it, ++n) {
      const std::size_t skip = n == 0 ? c.out_off : 0;
      iov[n] = {it->data() + skip, it->size() - skip};
    }
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t w = ::sendmsg(c.fd, &mh, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (w <= 0) {
      close_conn(id);
      return false;
    }
    std::size_t left = static_cast<std::size_t>(w);
    c.out_bytes -= left;
    bool answered = false;
    while (left) {
      const std::size_t rest = c.out.front().size() - c.out_off;
      if (left < rest) {
        c.out_off += left;
        break;
      }
      left -= rest;
      c.out.pop_front();
      c.out_off = 0;
      answered = true;
    }
    if (answered && !protocol_) progress(c, monotonic_ms());
  }
  return true;
}

bool TcpServer::settle(std::uint64_t id, Conn& c) {
  if (!c.paused && (c.out_bytes >= kTcpOutputPause || c.in_flight >= kTcpMaxPipeline)) {
    c.paused = true;
  } else if (c.paused && c.out_bytes <= kTcpOutputResume && c.in_flight <= kTcpMaxPipeline / 2) {
    c.paused = false;
    // Queries left in the input buffer by the pause: no new bytes may ever come to wake
    // us through EPOLLIN, so ask for EPOLLOUT (the socket is writable: it fires at once).
    c.resume_pending = c.in.size() > c.in_off || tls_pending(c);
  }
  if (c.eof && c.out_bytes == 0) {
    close_conn(id);
    return false;
  }
  std::uint32_t want = 0;
  if (!c.paused && !c.eof) want |= EPOLLIN | EPOLLRDHUP;
  if (c.out_bytes || c.resume_pending) want |= EPOLLOUT;
  if (want != c.events) {
    epoll_event ev{};
    ev.events = want;
    ev.data.u64 = tag_ | id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = want;
  }
  return true;
}

sockaddr_storage TcpServer::peer(std::uint64_t conn_id) const {
  auto it = conns_.find(conn_id & kIdMask);
  return it == conns_.end() ? sockaddr_storage{} : it->second.peer;
}

sockaddr_storage TcpServer::local(std::uint64_t conn_id) const {
  sockaddr_storage a{};
  auto it = conns_.find(conn_id & kIdMask);
  socklen_t len = sizeof a;
  if (it == conns_.end() || ::getsockname(it->second.fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return {};
  return a;
}

void TcpServer::sweep_idle(std::uint64_t now) {
  while (tls_ && !handshakes_.empty()) {
    const Conn& c = conns_.at(handshakes_.front());
    if (now < c.accepted_ms || now - c.accepted_ms <= tls_->handshake_timeout_ms) break;
    close_conn(handshakes_.front());
  }
  while (!lru_.empty()) {
    const Conn& c = conns_.at(lru_.front());
    if (now < c.last_progress_ms || now - c.last_progress_ms <= limits_.idle_timeout_ms) break;
    close_conn(lru_.front());
  }
  if (accept_paused_) {
    accept_paused_ = false;
    for (std::size_t j = 0; j < listen_fds_.size(); ++j) {
      epoll_event ev{};
      ev.events = kTcpListenEvents;
      ev.data.u64 = listen_tag_ | j;
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fds_[j], &ev) != 0 && errno != EEXIST) accept_paused_ = true;
    }
  }
}

void TcpServer::stop_accepting() {
  for (int fd : listen_fds_) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  listen_fds_.clear();
  accept_paused_ = false;
}

void TcpServer::watch(std::uint64_t id, Conn& c, std::uint32_t events) {
  if (events == c.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag_ | id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

bool TcpServer::handshake(std::uint64_t id, Conn& c, std::uint64_t now) {
  int rc;
  int warnings = 0;  // a non-fatal alert (a warning) lets the handshake go on, a few times
  do rc = gnutls_handshake(c.tls);
  while (rc == GNUTLS_E_INTERRUPTED || (rc < 0 && rc != GNUTLS_E_AGAIN && !gnutls_error_is_fatal(rc) && ++warnings < 4));
  if (rc == GNUTLS_E_AGAIN) {
    watch(id, c, (gnutls_record_get_direction(c.tls) ? EPOLLOUT : EPOLLIN) | EPOLLRDHUP);
    return true;
  }
  if (rc < 0) {
    spdlog::debug("tls: handshake failed: {}", gnutls_strerror(rc));
    close_conn(id);
    return false;
  }
  c.handshaking = false;
  handshakes_.erase(c.hs);
  progress(c, now);
  return true;
}

ssize_t TcpServer::recv_once(Conn& c, void* data, std::size_t len) {
  if (c.drained) {
    errno = EAGAIN;
    return -1;
  }
  const ssize_t n = ::recv(c.fd, data, len, 0);
  if (n > 0 && static_cast<std::size_t>(n) < len) c.drained = true;
  return n;
}

ssize_t TcpServer::tls_pull(void* conn, void* data, std::size_t len) {
  Conn& c = *static_cast<Conn*>(conn);
  if (c.tls_ahead_off == c.tls_ahead_len) {
    if (len >= kTlsReadAhead) return recv_once(c, data, len);
    if (!c.tls_ahead) c.tls_ahead.reset(new std::uint8_t[kTlsReadAhead]);
    const ssize_t n = recv_once(c, c.tls_ahead.get(), kTlsReadAhead);
    if (n <= 0) {
      const int saved = errno;
      c.tls_ahead.reset();
      c.tls_ahead_len = c.tls_ahead_off = 0;
      errno = saved;
      return n;
    }
    c.tls_ahead_len = static_cast<std::uint32_t>(n);
    c.tls_ahead_off = 0;
  }
  const std::size_t n = std::min<std::size_t>(len, c.tls_ahead_len - c.tls_ahead_off);
  std::memcpy(data, c.tls_ahead.get() + c.tls_ahead_off, n);
  c.tls_ahead_off += static_cast<std::uint32_t>(n);
  if (c.tls_ahead_off == c.tls_ahead_len) {  // all handed out: an idle connection holds no buffer
    c.tls_ahead.reset();
    c.tls_ahead_len = c.tls_ahead_off = 0;
  }
  return static_cast<ssize_t>(n);
}

int TcpServer::tls_pull_timeout(void* conn, unsigned ms) {
  Conn& c = *static_cast<Conn*>(conn);
  if (c.tls_ahead_off < c.tls_ahead_len) return 1;
  pollfd p{c.fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(ms));
}

ssize_t TcpServer::tls_push(void* conn, const giovec_t* iov, int iovcnt) {
  const Conn& c = *static_cast<const Conn*>(conn);
  msghdr mh{};
  mh.msg_iov = reinterpret_cast<iovec*>(const_cast<giovec_t*>(iov));
  mh.msg_iovlen = static_cast<std::size_t>(iovcnt);
  return ::sendmsg(c.fd, &mh, MSG_NOSIGNAL);
}

ssize_t TcpServer::stream_recv(Conn& c, std::uint8_t* buf, std::size_t n) {
  if (!c.tls) return recv_once(c, buf, n);
  const ssize_t r = gnutls_record_recv(c.tls, buf, n);
  if (r >= 0) return r;  // 0: close_notify
  // A TCP close without close_notify, a renegotiation attempt or a bad record: no more input.
  errno = r == GNUTLS_E_AGAIN ? EAGAIN : r == GNUTLS_E_INTERRUPTED ? EINTR : ECONNRESET;
  return -1;
}

ssize_t TcpServer::stream_send(Conn& c, const std::uint8_t* buf, std::size_t n) {
  const ssize_t r = gnutls_record_send(c.tls, buf, n);
  if (r >= 0) return r;
  errno = r == GNUTLS_E_AGAIN ? EAGAIN : r == GNUTLS_E_INTERRUPTED ? EINTR : EPIPE;
  return -1;
}

void TcpServer::send_tls(std::uint64_t id, Conn& c, std::span<const std::uint8_t> msg) {
  std::uint8_t* body = framed_.data() + 2;
  std::size_t n = dns::pad_response(msg, dns::kResponsePaddingBlock, body, kMaxMessage);
  if (n == 0) {  // no EDNS in the answer (so none in the query), or no room: as it is
    std::memcpy(body, msg.data(), msg.size());
    n = msg.size();
  }
  framed_[0] = static_cast<std::uint8_t>(n >> 8);
  framed_[1] = static_cast<std::uint8_t>(n);
  if (id == tls_batch_id_) {  // answered while its input is read: written with the others
    tls_batch_.insert(tls_batch_.end(), framed_.data(), framed_.data() + 2 + n);
    if (tls_batch_.size() < kTlsBatchBytes) return;  // when the read is done (flush_tls_batch)
    // A full record's worth: written now, so the output bound (kTcpOutputPause) sees it
    // and can pause the reading as without batching.
    if (write_tls_batch(id, c) < 0) {
      tls_batch_id_ = 0;  // closed
      return;
    }
    settle(id, c);
    return;
  }
  const int written = write_or_queue(id, c, {framed_.data(), 2 + n});
  if (written < 0) return;
  if (written == 1) progress(c, monotonic_ms());
  settle(id, c);
}

int TcpServer::write_or_queue(std::uint64_t id, Conn& c, std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  if (c.out_bytes == 0) {
    while (done < bytes.size()) {  // a TLS record holds at most 16 KiB: a larger write takes several
      const ssize_t w = c.tls ? stream_send(c, bytes.data() + done, bytes.size() - done)
                              : ::send(c.fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (w <= 0) {
        close_conn(id);
        return -1;
      }
      done += static_cast<std::size_t>(w);
    }
    if (done == bytes.size()) return 1;
  }
  c.out.emplace_back(bytes.begin() + static_cast<long>(done), bytes.end());
  c.out_bytes += bytes.size() - done;
  return 0;
}

bool TcpServer::write(std::uint64_t conn_id, std::span<const std::uint8_t> bytes) {
  const std::uint64_t id = conn_id & kIdMask;
  Conn* c = find(id);
  if (!c || c->handshaking) return false;
  if (bytes.empty()) return true;
  return write_or_queue(id, *c, bytes) >= 0 && settle(id, *c);
}

void TcpServer::mark_progress(std::uint64_t conn_id, std::uint64_t now) {
  if (Conn* c = find(conn_id & kIdMask)) progress(*c, now);
}

bool TcpServer::protocol_input(std::uint64_t id, Conn& c) {
  if (c.in_off == c.in.size()) return true;
  // The bytes stay where they are while the protocol reads them (StreamProtocol's REQUIRES).
  const bool ok = protocol_->on_input(id, {c.in.data() + c.in_off, c.in.size() - c.in_off});
  Conn* after = find(id);
  if (!after) return false;
  after->in.clear();
  after->in_off = 0;
  if (after->in.capacity() > 2 * kReadSize) after->in.shrink_to_fit();
  if (!ok) after->eof = true;  // nothing more is read; closed once its output is out
  return true;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_stream.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "dns/opt_record.hpp"
#include "wire/constants.hpp"
#include "workers/tls_credentials.hpp"

namespace dnsarena::workers {

namespace {
constexpr std::uint64_t kFirstBackoffUs = 250'000;
constexpr std::uint64_t kMaxBackoffUs = 8'000'000;
constexpr unsigned kSilentTimeoutsToClose = 2;
constexpr std::size_t kMinReplyBytes = 12;
constexpr unsigned kMaxRepliesPerEvent = 256;
}  // namespace

UpstreamTlsTrust::UpstreamTlsTrust(const std::string& ca_file) {
  if (const int rc = gnutls_certificate_allocate_credentials(&cred_); rc < 0)
    throw std::runtime_error(std::string("TLS upstream: ") + gnutls_strerror(rc));
  const int n = ca_file.empty() ? gnutls_certificate_set_x509_system_trust(cred_)
                                : gnutls_certificate_set_x509_trust_file(cred_, ca_file.c_str(), GNUTLS_X509_FMT_PEM);
  if (n <= 0) {
    gnutls_certificate_free_credentials(cred_);
    const std::string where = ca_file.empty() ? "the system trust store" : "tls_ca_file '" + ca_file + "'";
    throw std::runtime_error(where + ": " + (n < 0 ? gnutls_strerror(n) : "no certificate in it"));
  }
}

UpstreamTlsTrust::~UpstreamTlsTrust() { gnutls_certificate_free_credentials(cred_); }

UpstreamStream::UpstreamStream(const Endpoint& upstream, Settings settings, int epoll_fd, std::uint64_t epoll_data)
    : upstream_(upstream), settings_(std::move(settings)), epoll_fd_(epoll_fd), epoll_data_(epoll_data) {}

UpstreamStream::~UpstreamStream() { close_quietly(); }

void UpstreamStream::close_quietly() {
  if (tls_) {
    gnutls_deinit(tls_);
    tls_ = nullptr;
  }
  if (fd_ >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd_, nullptr);
    ::close(fd_);
    fd_ = -1;
  }
  state_ = State::closed;
  watched_ = 0;
  server_idle_us_ = -1;  // the next connection's server says its own
  out_.clear();
  out_done_ = 0;
  tls_retry_len_ = 0;
  in_.clear();
  in_have_ = 0;
  silent_timeouts_ = 0;
}

void UpstreamStream::close(bool failed_connect, std::uint64_t now_us, Events& events, const std::string& why) {
  for (const auto& [id, token] : by_id_) events.broken.push_back(token);
  by_id_.clear();
  close_quietly();
  if (failed_connect) {
    backoff_us_ = backoff_us_ == 0 ? kFirstBackoffUs : std::min(backoff_us_ * 2, kMaxBackoffUs);
    retry_at_us_ = now_us + backoff_us_;
    events.failure = why;
  }
}

bool UpstreamStream::open(std::uint64_t now_us, Events& events) {
  if (now_us < retry_at_us_) return false;
  const int fd = ::socket(upstream_.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;  // out of descriptors: this query fails, the next one tries again
  // Each query is written when it comes: without this, Nagle holds a query behind the
  // previous one's unacknowledged bytes (a delayed ACK: up to 40 ms).
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&upstream_.addr), upstream_.len);
  if (rc != 0 && errno != EINPROGRESS) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    close(true, now_us, events, "connect: " + why);
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.u64 = epoll_data_;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  watched_ = ev.events;
  state_ = State::connecting;
  last_active_us_ = now_us;
  resume_saved_ = false;
  if (!settings_.tls) return true;
  // The TLS session: verified against `auth_name` (SNI too), ALPN "dot" (RFC 7858 3.1).
  const bool ok =
      gnutls_init(&tls_, GNUTLS_CLIENT | GNUTLS_NONBLOCK) == 0 &&
      gnutls_set_default_priority(tls_) == 0 &&
      gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, settings_.trust) == 0 &&
      gnutls_server_name_set(tls_, GNUTLS_NAME_DNS, settings_.auth_name.data(), settings_.auth_name.size()) == 0;
  if (!ok) {
    close(true, now_us, events, "TLS session setup failed");
    return false;
  }
  gnutls_session_set_verify_cert(tls_, settings_.auth_name.c_str(), 0);
  gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(kTlsAlpn)),
                      static_cast<unsigned>(std::strlen(kTlsAlpn))};
  gnutls_alpn_set_protocols(tls_, &alpn, 1, 0);
  if (!resume_.empty()) gnutls_session_set_data(tls_, resume_.data(), resume_.size());
  gnutls_transport_set_int(tls_, fd_);
  gnutls_handshake_set_timeout(tls_, 0);  // the queries' own timeouts bound it
  return true;
}

bool UpstreamStream::send(std::uint16_t id, std::uint64_t token, const std::uint8_t* message, std::size_t len,
                          std::uint64_t now_us, Events& events) {
  if (len < kMinReplyBytes || len > 65535 || by_id_.contains(id)) return false;
  if (state_ == State::closed && !open(now_us, events)) return false;
  const std::size_t at = out_.size();
  out_.resize(at + 2 + len);
  wire::put16(out_.data() + at, static_cast<std::uint16_t>(len));
  std::memcpy(out_.data() + at + 2, message, len);
  by_id_[id] = token;
  last_active_us_ = now_us;
  if (state_ == State::ready && !flush(now_us, events)) return false;  // closed: the token is in broken
  return true;
}

void UpstreamStream::forget(std::uint16_t id, std::uint64_t token) {
  if (auto it = by_id_.find(id); it != by_id_.end() && it->second == token) by_id_.erase(it);
}

void UpstreamStream::timed_out(std::uint16_t id, std::uint64_t token, std::uint64_t now_us, Events& events) {
  forget(id, token);
  if (state_ == State::closed) return;
  if (state_ != State::ready) {
    // Never connected within a query's timeout: a black hole or a stuck handshake.
    if (by_id_.empty()) close(true, now_us, events, "no connection within the query timeout");
    return;
  }
  if (++silent_timeouts_ >= kSilentTimeoutsToClose)
    close(false, now_us, events, "");
}

void UpstreamStream::rewatch() {
  std::uint32_t want = EPOLLIN;
  if (state_ == State::connecting) want |= EPOLLOUT;
  else if (state_ == State::handshaking) want = gnutls_record_get_direction(tls_) ? EPOLLOUT : EPOLLIN;
  else if (out_done_ < out_.size()) want |= EPOLLOUT;
  if (want == watched_ || fd_ < 0) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = epoll_data_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
  watched_ = want;
}

bool UpstreamStream::handshake(std::uint64_t now_us, Events& events) {
  int rc;
  int warnings = 0;  // non-fatal alerts: a few are read on, a stream of them is a failure
  do rc = gnutls_handshake(tls_);
  while (rc == GNUTLS_E_INTERRUPTED || (rc < 0 && !gnutls_error_is_fatal(rc) && rc != GNUTLS_E_AGAIN && ++warnings < 4));
  if (rc == GNUTLS_E_AGAIN) {
    rewatch();
    return true;
  }
  if (rc < 0) {
    std::string why = std::string("TLS handshake: ") + gnutls_strerror(rc);
    if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
      gnutls_datum_t text{};
      if (gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(tls_),
                                                        GNUTLS_CRT_X509, &text, 0) == 0) {
        why += std::string(" (") + reinterpret_cast<const char*>(text.data) + ")";
        gnutls_free(text.data);
      }
    }
    if (rc != GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) resume_.clear();  // perhaps the session it offered
    close(true, now_us, events, why);
    return false;
  }
  state_ = State::ready;
  backoff_us_ = 0;
  events.opened = true;
  events.resumed = gnutls_session_is_resumed(tls_) != 0;
  return true;
}

bool UpstreamStream::flush(std::uint64_t now_us, Events& events) {
  while (out_done_ < out_.size()) {
    ssize_t n;
    if (tls_) {
      const std::size_t len = tls_retry_len_ ? tls_retry_len_ : std::min<std::size_t>(out_.size() - out_done_, 16384);
      n = gnutls_record_send(tls_, out_.data() + out_done_, len);
      if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
        tls_retry_len_ = len;
        break;
      }
      tls_retry_len_ = 0;
      if (n < 0) {
        close(false, now_us, events, "");
        return false;
      }
    } else {
      n = ::send(fd_, out_.data() + out_done_, out_.size() - out_done_, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      if (n < 0) {
        close(false, now_us, events, "");
        return false;
      }
    }
    out_done_ += static_cast<std::size_t>(n);
  }
  if (out_done_ == out_.size()) {
    out_.clear();
    out_done_ = 0;
  }
  rewatch();
  return true;
}

bool UpstreamStream::read(std::uint64_t now_us, Events& events) {
  // At most kMaxRepliesPerEvent messages per event (epoll reports the rest again): a
  // server streaming messages cannot hold the worker's loop. Not while GnuTLS holds
  // decrypted bytes (at most one record), which no epoll event would report.
  int warnings = 0;
  for (unsigned messages = 0;;) {
    // The 2-byte length first, then exactly that many bytes.
    const std::size_t want = in_have_ < 2 ? 2 : 2 + wire::get16(in_.data());
    if (in_.size() < want) in_.resize(want);
    if (in_have_ == want && want > 2) {
      const std::uint16_t id = wire::get16(in_.data() + 2);
      if (auto it = by_id_.find(id); it != by_id_.end()) {
        events.replies.push_back({it->second, std::vector<std::uint8_t>(in_.begin() + 2, in_.begin() + want)});
        by_id_.erase(it);
      }  // else: a query that ended already (timed out, answered elsewhere): dropped
      silent_timeouts_ = 0;
      last_active_us_ = now_us;
      if (const int timeout = dns::read_tcp_keepalive({in_.data() + 2, want - 2}); timeout >= 0)
        server_idle_us_ = static_cast<std::int64_t>(timeout) * 100'000;
      in_have_ = 0;
      if (++messages >= kMaxRepliesPerEvent && !(tls_ && gnutls_record_check_pending(tls_) > 0)) return true;
      if (tls_ && !resume_saved_ && (gnutls_session_get_flags(tls_) & GNUTLS_SFLAGS_SESSION_TICKET)) {
        gnutls_datum_t data{};
        if (gnutls_session_get_data2(tls_, &data) == 0) {
          resume_.assign(data.data, data.data + data.size);
          gnutls_free(data.data);
          resume_saved_ = true;
        }
      }
      continue;
    }
    ssize_t n;
    if (tls_) {
      n = gnutls_record_recv(tls_, in_.data() + in_have_, want - in_have_);
      if (n == GNUTLS_E_AGAIN) return true;
      if (n == GNUTLS_E_INTERRUPTED) continue;
      // A non-fatal alert or a renegotiation request: read on, a few times.
      if (n < 0 && !gnutls_error_is_fatal(static_cast<int>(n)) && ++warnings < 4) continue;
    } else {
      n = ::recv(fd_, in_.data() + in_have_, want - in_have_, 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
    }
    const bool bad_length = want == 2 && n > 0 && in_have_ + static_cast<std::size_t>(n) == 2 &&
                            wire::get16(in_.data()) < kMinReplyBytes;
    if (n <= 0 || bad_length) {  // closed by the server, reset, a TLS error, or a length no reply has
      close(false, now_us, events, "");
      return false;
    }
    in_have_ += static_cast<std::size_t>(n);
  }
}

void UpstreamStream::on_event(std::uint32_t ev, std::uint64_t now_us, Events& out) {
  if (fd_ < 0) return;
  if (state_ == State::connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0 || (ev & (EPOLLERR | EPOLLHUP))) {
      close(true, now_us, out, std::string("connect: ") + std::strerror(err ? err : ECONNREFUSED));
      return;
    }
    if (!(ev & EPOLLOUT)) return;
    if (settings_.tls) {
      state_ = State::handshaking;
    } else {
      state_ = State::ready;
      backoff_us_ = 0;
      out.opened = true;
    }
  }
  if (state_ == State::handshaking && (!handshake(now_us, out) || state_ != State::ready)) return;
  if (!flush(now_us, out)) return;
  if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) || (tls_ && gnutls_record_check_pending(tls_) > 0)) read(now_us, out);
}

std::uint64_t UpstreamStream::idle_deadline_us() const {
  if (state_ == State::closed || !by_id_.empty()) return 0;
  std::uint64_t idle = settings_.idle_timeout_us;
  if (server_idle_us_ >= 0) idle = std::min(idle, static_cast<std::uint64_t>(server_idle_us_));
  return last_active_us_ + idle;
}

void UpstreamStream::close_if_idle(std::uint64_t now_us) {
  const std::uint64_t at = idle_deadline_us();
  if (at == 0 || now_us < at) return;
  if (tls_ && state_ == State::ready) gnutls_bye(tls_, GNUTLS_SHUT_WR);  // close_notify, not waited on
  close_quietly();
}

}  // namespace dnsarena::workers

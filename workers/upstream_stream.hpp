// SPDX-License-Identifier: GPL-3.0-or-later
// One worker's connection to one upstream over TCP or TLS (a forward zone's `transport:
// tcp` or `tls`), kept open and shared by every query the worker sends that upstream.
//
// Framing is RFC 1035 4.2.2 (a 2-byte length before each message) over TCP, or over TLS
// as RFC 7858 asks. Queries are pipelined: each is written as soon as it is queued, and
// replies are matched to queries by message ID, in whatever order they come (RFC 7766
// 6.2.1.1). An ID is used by at most one query in flight on the connection (id_free());
// the caller (UpstreamClient) still checks the question of every reply.
//
// Life of the connection:
//   closed      no socket. send() opens one (non-blocking connect), unless a failed
//               connect is still backing off (`retry_at`): then send() refuses and the
//               caller's attempt fails at once, as with a refusing UDP server.
//   connecting  TCP handshake; queries queue in `out_`.
//   handshaking TLS only: the GnuTLS handshake. The certificate must chain to the CA
//               bundle (or the system's trust store) and carry `auth_name` (RFC 8310
//               strict privacy: no fallback to clear text or to an unverified peer). A
//               session of an earlier connection is offered for resumption.
//   ready       queued bytes are written, replies read.
// A connection that fails before it is ready backs off: 250 ms, doubling up to 8 s; one
// that was ready and breaks (reset, EOF, a bad length, a TLS error) is reopened at the
// next send without delay. Either way the queries it carried are handed back as broken
// (Events::broken) for their attempt to fail over. A ready connection with no query in
// flight for `idle_timeout` is closed by us (close_if_idle), before common server idle
// timeouts (Knot 10 s, Unbound 30 s) close it under a query; sooner when the server's
// replies carry an edns-tcp-keepalive TIMEOUT (RFC 7828 3.2.2: the client closes an idle
// connection by then; 0 closes it as soon as nothing is in flight). The last TIMEOUT
// heard holds for the connection; a new connection starts without one. A ready connection whose
// last two queries both timed out without any reply between them is closed too
// (timed_out), so that a server that lost the connection's state (a restart behind a NAT,
// a black hole) gets a new handshake instead of every later query's full timeout.
//
// Bounds: at most 65,536 queries in flight (one per ID; the caller's in-flight bound is
// far lower), one reply of at most 65,535 bytes buffered, queued output only what the
// caller's queries put there (it is dropped with the connection).
#pragma once
#include <gnutls/gnutls.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "workers/serve_config.hpp"

namespace dnsarena::workers {

// The trust anchors for TLS upstreams: a CA bundle file, or the system's store when the
// path is empty. Throws std::runtime_error naming the file and GnuTLS's reason.
class UpstreamTlsTrust {
public:
  explicit UpstreamTlsTrust(const std::string& ca_file);
  ~UpstreamTlsTrust();
  UpstreamTlsTrust(const UpstreamTlsTrust&) = delete;
  UpstreamTlsTrust& operator=(const UpstreamTlsTrust&) = delete;
  gnutls_certificate_credentials_t credentials() const { return cred_; }

private:
  gnutls_certificate_credentials_t cred_ = nullptr;
};

class UpstreamStream {
public:
  struct Settings {
    bool tls = false;
    std::string auth_name;                            // TLS: the name the certificate must carry
    gnutls_certificate_credentials_t trust = nullptr;  // TLS: from an UpstreamTlsTrust
    std::uint64_t idle_timeout_us = 8'000'000;
  };
  // What an event brought: replies (the query's token and the message, without its
  // length) and the tokens of queries lost with a broken connection.
  struct Reply {
    std::uint64_t token;
    std::vector<std::uint8_t> message;
  };
  struct Events {
    std::vector<Reply> replies;
    std::vector<std::uint64_t> broken;
    bool opened = false;   // a connection became ready
    bool resumed = false;  // ... with a resumed TLS session
    std::string failure;   // why a connection failed before it was ready ("" when it did not)
  };

  // `epoll_data`: what epoll reports for this connection's socket.
  UpstreamStream(const Endpoint& upstream, Settings settings, int epoll_fd, std::uint64_t epoll_data);
  ~UpstreamStream();
  UpstreamStream(const UpstreamStream&) = delete;
  UpstreamStream& operator=(const UpstreamStream&) = delete;

  bool id_free(std::uint16_t id) const { return !by_id_.contains(id); }
  // Queues `message` (a query with ID `id`, not yet framed) for `token`, opening the
  // connection when there is none. False when it cannot be sent now (backing off after a
  // failed connect, no socket, or a write error): nothing is kept for the token.
  bool send(std::uint16_t id, std::uint64_t token, const std::uint8_t* message, std::size_t len,
            std::uint64_t now_us, Events& events);
  // The query `id` of `token` ended otherwise (a reply it did not accept is not this:
  // replies are forgotten as they are handed out). Its reply, if one comes, is dropped.
  void forget(std::uint16_t id, std::uint64_t token);
  // The query `id` of `token` timed out: forgotten, and the connection closed when it
  // looks dead (see above). Its other queries are then in events.broken.
  void timed_out(std::uint16_t id, std::uint64_t token, std::uint64_t now_us, Events& events);
  void on_event(std::uint32_t events, std::uint64_t now_us, Events& out);
  // Closes a ready connection with nothing in flight since idle_timeout.
  void close_if_idle(std::uint64_t now_us);
  // When close_if_idle has something to do next (0: nothing).
  std::uint64_t idle_deadline_us() const;
  // Ready: a query sent now is answered in one round trip (its time is the server's RTT).
  bool ready() const { return state_ == State::ready; }
  std::size_t in_flight() const { return by_id_.size(); }

private:
  enum class State { closed, connecting, handshaking, ready };
  bool open(std::uint64_t now_us, Events& events);
  // Closes the socket; the queries in flight go to events.broken. `failed_connect`: it
  // never became ready (back off before the next).
  void close(bool failed_connect, std::uint64_t now_us, Events& events, const std::string& why);
  void close_quietly();
  bool handshake(std::uint64_t now_us, Events& events);  // false: the connection was closed
  bool flush(std::uint64_t now_us, Events& events);      // false: the connection was closed
  bool read(std::uint64_t now_us, Events& events);       // false: the connection was closed
  void rewatch();

  Endpoint upstream_;
  Settings settings_;
  int epoll_fd_;
  std::uint64_t epoll_data_;
  State state_ = State::closed;
  int fd_ = -1;
  gnutls_session_t tls_ = nullptr;
  std::vector<std::uint8_t> resume_;  // TLS session data of an earlier connection
  bool resume_saved_ = false;         // this connection's session data was kept
  std::uint32_t watched_ = 0;         // the epoll events asked for now
  std::vector<std::uint8_t> out_;     // framed queries not yet written
  std::size_t out_done_ = 0;
  std::size_t tls_retry_len_ = 0;     // GnuTLS: after GNUTLS_E_AGAIN the same length again
  std::vector<std::uint8_t> in_;      // a reply as it arrives, its length first
  std::size_t in_have_ = 0;
  std::unordered_map<std::uint16_t, std::uint64_t> by_id_;  // queries in flight: ID -> token
  std::uint64_t last_active_us_ = 0;  // the last reply or send
  std::int64_t server_idle_us_ = -1;  // the server's edns-tcp-keepalive TIMEOUT (-1: none heard)
  unsigned silent_timeouts_ = 0;      // timeouts since the last reply
  std::uint64_t retry_at_us_ = 0;     // closed after a failed connect: no new one before this
  std::uint64_t backoff_us_ = 0;
};

}  // namespace dnsarena::workers

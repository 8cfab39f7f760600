// SPDX-License-Identifier: GPL-3.0-or-later
// DNS over HTTPS (RFC 8484) for one worker: HTTP/2 (nghttp2, a server session per
// connection) as a StreamProtocol over a TcpServer with the TLS transport (ALPN "h2"), so
// accept, connection limits, the handshake bound, the output bound and the idle sweep are
// tcp_server.hpp's, unchanged.
//
// A request: the stream's :method, :path and content-type, and its body, are collected
// until the stream's END_STREAM; doh_request.hpp then decides its status. On 200 the DNS
// message goes to the handler with (connection id, stream id); the worker answers it on
// the same path as TCP, now (a hit) or later (a miss, through its Waiter), with send():
// 200, content-type application/dns-message, cache-control max-age=<the answer's least
// TTL>, the answer padded as over DoT (dns/edns_padding.hpp). Errors are a status without
// a body (fail()). An answer for a stream that is gone (reset by the client, the
// connection closed) is dropped: stream ids are never reused on a connection, nor
// connection ids in a worker, so an answer never reaches another request.
//
// Bounds, per connection:
//   streams   SETTINGS_MAX_CONCURRENT_STREAMS = max_streams; nghttp2 refuses a stream
//             beyond it (RST_STREAM REFUSED_STREAM), also before the client acknowledged
//             the setting. So at most max_streams requests wait for answers, each holding
//             at most one 64 KiB body and one answer.
//   headers   kDohMaxHeaderBytes per request (names + values + 32 each, as RFC 7541 4.1
//             counts them; also announced as SETTINGS_MAX_HEADER_LIST_SIZE): over it the
//             stream is reset. The header block's HPACK decoding is nghttp2's (fields over
//             64 KiB end the connection).
//   body      over kDohMaxMessage bytes: 413 at once; the rest of the body is read and
//             dropped (flow control: 64 KiB windows), the stream still counts until it ends.
//   output    nghttp2's frames go to the transport, which stops reading the connection
//             while kTcpOutputPause bytes wait (tcp_server.hpp); answers for the streams
//             in flight still queue, and DATA is held by HTTP/2 flow control.
//   time      the idle clock restarts when a request is complete and when an answer is
//             submitted, not on other frames: a client that opens streams and sends no
//             body, or only PINGs, is closed by the idle sweep.
//   garbage   a connection that does not start with the HTTP/2 preface, or breaks the
//             protocol, is closed (after nghttp2's GOAWAY, when it has one).
// Reload: the retiring worker sends every connection a graceful GOAWAY (stop_accepting)
// and answers what still comes until the client closes or the drain ends.
//
// Output: the frames of one input, or of one submitted answer, are gathered and written
// together, except that every answer ends its TLS record: after a DATA frame with
// END_STREAM, what is gathered is written. dnsperf -m doh (2.10; src/net_doh.c) reads one
// record at a time and assembles one answer at a time: when a second answer's DATA comes
// in the record after a first one completed, its data-chunk callback returns
// NGHTTP2_ERR_PAUSE and keeps nothing, although nghttp2 counts that chunk delivered; the
// pending END_STREAM then completes an empty answer, whose effect repeats for every later
// answer on that connection. A record with two answers (two requests in one input, or
// answers that waited for flow-control window resumed together) so lost every query
// outstanding on the connection until dnsperf's timeout. Handing all the reads of one
// event to nghttp2 at once (their answers in one record) fails the same way.
//
// Not thread-safe: one DohServer per worker, used by its event loop only.
#pragma once
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "workers/doh_request.hpp"
#include "workers/tcp_server.hpp"

namespace dnsarena::workers {

inline constexpr std::size_t kDohMaxHeaderBytes = 16 * 1024;

struct DohSettings {
  std::string path = "/dns-query";  // the one endpoint; other paths get 404
  unsigned max_streams = 100;       // SETTINGS_MAX_CONCURRENT_STREAMS
};

class DohServer final : private StreamProtocol {
public:
  using Handler = std::function<void(std::uint64_t conn_id, std::uint32_t stream, std::uint8_t* msg, std::size_t len)>;
  // As TcpServer's constructor; `tls` offers ALPN "h2" (TlsServerSettings::alpn).
  DohServer(int epoll_fd, std::vector<int> listen_fds, std::uint64_t listen_tag, std::uint64_t tag,
            const TcpLimits& limits, const TlsServerSettings* tls, DohSettings settings, Handler handler);
  ~DohServer() override;
  DohServer(const DohServer&) = delete;
  DohServer& operator=(const DohServer&) = delete;

  // The answer to a request handed to the handler: 200 with `msg`.
  void send(std::uint64_t conn_id, std::uint32_t stream, std::span<const std::uint8_t> msg);
  // A request that gets no DNS answer (the worker dropped the message): `status`, no body.
  void fail(std::uint64_t conn_id, std::uint32_t stream, DohStatus status);

  // The transport's, as TcpServer's.
  void on_accept(std::size_t listener, std::uint64_t now_ms) { transport_.on_accept(listener, now_ms); }
  void on_event(std::uint64_t conn_id, std::uint32_t events, std::uint64_t now_ms) {
    transport_.on_event(conn_id, events, now_ms);
  }
  void sweep_idle(std::uint64_t now_ms) { transport_.sweep_idle(now_ms); }
  // A retiring worker (a reload): no more accepts, and on every connection the graceful
  // GOAWAY of RFC 9113 6.8 (nghttp2's shutdown notice: last stream id 2^31-1, NO_ERROR),
  // so the client opens its next connection, which reaches a new worker, while what it
  // sends meanwhile on this one is still answered.
  void stop_accepting();
  std::size_t connections() const { return transport_.connections(); }
  sockaddr_storage peer(std::uint64_t conn_id) const { return transport_.peer(conn_id); }
  void set_proxy(ProxyGate* gate) { transport_.set_proxy(gate); }
  sockaddr_storage local(std::uint64_t conn_id) const { return transport_.local(conn_id); }
  // Streams open over all connections (requests not yet answered, or answers not yet sent).
  std::size_t streams() const;

  struct Stream;
  struct Session;

private:
  bool on_input(std::uint64_t conn_id, std::span<const std::uint8_t> bytes) override;
  void on_close(std::uint64_t conn_id) override;
  Session* session(std::uint64_t conn_id);
  // Writes every frame nghttp2 has ready. False when the connection closed meanwhile.
  bool flush(Session& s);
  // The response headers of `stream_id`, and the answer in `st.body` when not empty; then
  // flushed unless nghttp2 is reading (frames go out when its input is done).
  void respond(Session& s, std::int32_t stream_id, Stream& st, DohStatus status);
  // A stream's request is complete: its status, or the handler.
  void complete(Session& s, std::int32_t stream_id, Stream& st);

  friend struct Callbacks;
  DohSettings settings_;
  Handler handler_;
  nghttp2_session_callbacks* callbacks_ = nullptr;
  nghttp2_option* options_ = nullptr;
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions_;
  std::vector<std::uint8_t> msg_;  // one request's DNS message
  std::vector<std::uint8_t> out_;  // frames gathered for one transport write
  TcpServer transport_;            // last: its connections end (on_close) before the sessions
};

}  // namespace dnsarena::workers

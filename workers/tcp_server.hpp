// SPDX-License-Identifier: GPL-3.0-or-later
// DNS over TCP for one worker: the supervisor's listening sockets (one per listen address,
// each shared by all workers) and their connections, each carrying length-prefixed messages (RFC 1035 4.2.2, RFC 7766),
// held to fixed resource bounds so that hostile clients cannot take the worker's memory
// or every connection slot.
//
// Operations and their costs (n = open connections):
//   on_accept()    accepts every pending connection. Over the client's address limit
//                  (max_per_client; IPv4 /32, IPv6 /64): closed at once, as Unbound's
//                  tcp-connection-limit does. At max_connections: the connection idle the
//                  longest is closed to make room (the head of the LRU list), so that slow
//                  clients cannot lock everyone out. O(1) per connection. EMFILE/ENFILE:
//                  every listener is unwatched until the next sweep (at most 1 s; Unbound
//                  waits 2 s) instead of spinning on a level-triggered event that accept
//                  cannot clear. NOTE: a reserve descriptor (close it, accept, close the
//                  connection, reopen) was not taken: it turns clients away that the
//                  backlog could hold until descriptors come back.
//   on_event()     writes pending output, then reads (at most kReadsPerEvent reads) and
//                  calls the handler for every complete message, pipelined.
//   send(id, msg)  writes the 2-byte length and the message, queueing what the socket does
//                  not take. O(1) amortised; a later answer to a closed connection is dropped.
//   sweep_idle()   closes connections without progress for idle_timeout_ms. O(closed).
//
// Progress: a connection's clock restarts only when a whole query has been received or a
// whole answer has been handed to the kernel. Bytes trickled without completing a message
// do not count, nor does a client that reads a byte now and then: a connection that
// completes nothing for idle_timeout_ms is closed, whatever it trickles. All connections
// share one timeout, so the LRU list (most recent progress at the back) is also the
// deadline order: the sweep pops from the front, and the front is the eviction victim.
//
// Output bound: output is a deque of answers with a read offset into the first (O(1)
// consumption, writev of several answers at once). When pending output reaches
// kTcpOutputPause, or kTcpMaxPipeline queries are unanswered, the connection stops being
// read (EPOLLIN off; the client's further queries wait in kernel buffers and TCP flow
// control pushes back on it); it is read again when output drains to kTcpOutputResume
// and at most half the pipeline is in flight. Answers that upstream completions produce
// for a paused connection still queue, so output stays under kTcpOutputPause plus
// kTcpMaxPipeline answers, and one connection holds at most kTcpMaxPipeline upstream
// queries. Input: the unprocessed bytes are less than one message plus one read
// (< 82 KiB).
//
// REQUIRES: the handler answers (send()) every query it does not drop as malformed. A
// dropped query stays counted in flight until the connection closes: a client that sends
// kTcpMaxPipeline messages that get no answer is no longer read, and the idle sweep
// closes it.
//
// Transports: plain TCP, or TLS (DNS over TLS, RFC 7858) when constructed with
// TlsServerSettings (tls_credentials.hpp). A TLS server runs every bound above the same
// way; only the byte stream differs (stream_recv/stream_send: recv/sendmsg or GnuTLS
// records on the non-blocking socket). Its connections also:
//   - handshake first: a connection is accepted (and counted in every limit) at once and
//     handshakes on its events; one not done within handshake_timeout_ms of its accept is
//     closed by the sweep (a list in accept order, so the sweep pops from the front), and
//     at most max_handshakes are in progress (a new one closes the oldest, as the LRU
//     does for connections). A handshake that fails (not TLS, bad version) closes it.
//   - pad answers (RFC 8467 block padding, dns/edns_padding.hpp) at send time.
//   - have ids with kTlsConnBit set, so one handler can tell which server to answer on.
//   - write the answers a read of the connection produces (hits of pipelined queries)
//     together, once the read is done: one gnutls_record_send, so up to 16 KiB of answers
//     share a TLS record and a system call (tls_batch_); an answer sent at another time (a
//     miss) is written alone. Queued output is resent from the same bytes, as GnuTLS
//     requires after GNUTLS_E_AGAIN.
//   - read through tls_pull (DoT and DoH alike): one recv of up to 16 KiB hands GnuTLS
//     what it asks for record by record (with GnuTLS's own pull, every record took two
//     recv calls: its 5-byte header, then its body); the bound per event is
//     kReadsPerEvent x kReadSize bytes, as over TCP, not kReadsPerEvent records.
// GnuTLS and tls_pull may hold bytes the socket no longer signals: after the bound, or on
// a resume, such a connection asks for EPOLLOUT as resume_pending does.
//
// Protocols: with a StreamProtocol set (set_protocol; DNS over HTTPS, doh_server.hpp) the
// connection's bytes go to the protocol as they arrive instead of being cut into
// length-prefixed messages, and the protocol writes its bytes with write(); the handler
// and send() are unused. Accept, the limits, the handshake, the output bound (pause at
// kTcpOutputPause), EOF and the idle sweep stay the same; what counts as progress is the
// protocol's to say (mark_progress: a whole request received, a whole answer written),
// and its own bound replaces kTcpMaxPipeline (HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS).
//
// PROXY v2 (set_proxy, proxy_protocol.hpp): every connection's first bytes go to the
// gate before anything else (before TLS: a balancer writes the header in the clear):
// a listed balancer's header is removed and the client it carries becomes the
// connection's peer (peer(), and its per-client bound, which a listed source is not
// held to until then); a connection the gate drops is closed. Bytes read past the
// header stay for the DNS framing, or for GnuTLS (tls_ahead). Until the verdict (at most
// 512 header bytes) the connection holds at most 1 KiB and the idle sweep bounds it.
//
// Not thread-safe: one TcpServer per worker, used by its event loop only.
#pragma once
#include <sys/epoll.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "workers/tls_credentials.hpp"

namespace dnsarena::workers {

class ProxyGate;  // proxy_protocol.hpp

struct TcpLimits {
  unsigned max_connections = 256;  // per worker
  unsigned max_per_client = 32;    // per worker and client address (IPv4 /32, IPv6 /64); 0 = none
  unsigned idle_timeout_ms = 10000;
};

// Pending output at which a connection stops being read, and at which it is read again.
inline constexpr std::size_t kTcpOutputPause = 64 * 1024;
inline constexpr std::size_t kTcpOutputResume = 16 * 1024;
// How the caller registers each listener with epoll (a listener is the supervisor's, shared
// by every worker: one worker wakes per connection). An accept pause removes the
// registration and re-adds it with these events.
inline constexpr std::uint32_t kTcpListenEvents = EPOLLIN | EPOLLEXCLUSIVE;
// Queries of one connection handed to the handler and not yet answered (Knot Resolver's
// net.tcp_pipeline default).
inline constexpr unsigned kTcpMaxPipeline = 100;
// Set in the ids of a TLS server's connections (ids are 48 bits).
inline constexpr std::uint64_t kTlsConnBit = 1ull << 47;

// A protocol over a connection's byte stream in place of RFC 7766 framing.
// REQUIRES: on_input does not write() while it still reads `bytes` (a failed write closes
// the connection and frees them); on_close may come from inside write().
class StreamProtocol {
public:
  virtual ~StreamProtocol() = default;
  // The connection's next bytes, all of them consumed. False: a protocol error; the
  // connection is closed once what was written is out.
  virtual bool on_input(std::uint64_t conn_id, std::span<const std::uint8_t> bytes) = 0;
  virtual void on_close(std::uint64_t conn_id) = 0;
};

class TcpServer {
public:
  using Handler = std::function<void(std::uint64_t conn_id, std::uint8_t* msg, std::size_t len)>;
  // `tag` is OR-ed into epoll data of connection fds (the id occupies the low 48 bits);
  // the caller registers listener j of `listen_fds` (one per listen address) with epoll
  // data `listen_tag | j` and kTcpListenEvents.
  TcpServer(int epoll_fd, std::vector<int> listen_fds, std::uint64_t listen_tag, std::uint64_t tag,
            const TcpLimits& limits, Handler handler, const TlsServerSettings* tls = nullptr);
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  // Listener j (listen_tag | j) is readable.
  void on_accept(std::size_t listener, std::uint64_t now_ms);
  void on_event(std::uint64_t conn_id, std::uint32_t events, std::uint64_t now_ms);
  void send(std::uint64_t conn_id, std::span<const std::uint8_t> msg);
  // Closes connections without progress for the idle timeout; re-arms paused listeners.
  // The caller calls it about once a second.
  void sweep_idle(std::uint64_t now_ms);
  // Before the first accept: the connections speak `protocol` (see above).
  void set_protocol(StreamProtocol* protocol) { protocol_ = protocol; }
  // Before the first accept: each connection starts with the gate's preamble (above).
  void set_proxy(ProxyGate* gate) { proxy_ = gate; }
  // A protocol's bytes, written as they are (TLS records, no framing, no padding), queued
  // when the socket does not take them. False when the connection is gone or a write
  // error closed it (then StreamProtocol::on_close has run).
  bool write(std::uint64_t conn_id, std::span<const std::uint8_t> bytes);
  // A protocol's progress on the connection: its idle clock restarts.
  void mark_progress(std::uint64_t conn_id, std::uint64_t now_ms);
  // Unwatches the listeners for good (a retiring worker); open connections go on.
  void stop_accepting();
  std::size_t connections() const { return conns_.size(); }
  std::size_t handshakes() const { return handshakes_.size(); }
  // The client's address (family AF_UNSPEC when the connection is gone).
  sockaddr_storage peer(std::uint64_t conn_id) const;
  // The connection's local address, the one the client connected to (getsockname: a
  // system call; family AF_UNSPEC when the connection is gone).
  sockaddr_storage local(std::uint64_t conn_id) const;

private:
  // A client address as counted by the per-client limit: IPv4 (also IPv4-mapped IPv6)
  // /32, IPv6 /64 (one host usually holds a whole /64).
  struct ClientKey {
    std::array<std::uint8_t, 9> bytes{};  // [0] = 4 or 6, then the address or /64 prefix
    bool operator==(const ClientKey&) const = default;
  };
  struct ClientKeyHash {
    std::size_t operator()(const ClientKey& k) const;
  };
  struct Conn {
    int fd = -1;
    sockaddr_storage peer{};
    ClientKey client;
    std::vector<std::uint8_t> in;  // received bytes; [in_off, size) not yet processed
    std::size_t in_off = 0;
    std::deque<std::vector<std::uint8_t>> out;  // framed answers; out.front() sent up to out_off
    std::size_t out_off = 0;
    std::size_t out_bytes = 0;  // unsent bytes over all of `out`
    std::list<std::uint64_t>::iterator lru;
    std::uint64_t last_progress_ms = 0;
    std::uint32_t events = 0;   // what epoll watches now
    unsigned in_flight = 0;     // queries handed to the handler, not yet answered
    bool paused = false;        // output over kTcpOutputPause or pipeline full: not read
    bool eof = false;           // the client finished sending: close once output is out
    bool resume_pending = false;  // resumed with unprocessed input: EPOLLOUT wakes us
    // A recv of this event came back short of what it asked: the socket was empty then, so
    // the next recv of the same event would only say EAGAIN; it is skipped. Epoll is
    // level-triggered: bytes that come later are reported by the next epoll_wait.
    bool drained = false;
    gnutls_session_t tls = nullptr;  // TLS server only
    // TLS: bytes read from the socket ahead of GnuTLS (tls_pull), [off, len) not yet
    // handed to it; freed when empty, so an idle connection holds none.
    std::unique_ptr<std::uint8_t[]> tls_ahead;
    std::uint32_t tls_ahead_len = 0, tls_ahead_off = 0;
    bool handshaking = false;        // TLS: in handshakes_, not yet reading queries
    bool proxy_pending = false;      // set_proxy: the first bytes still go to the gate
    bool client_counted = true;      // in per_client_ (a listed balancer: once its header is read)
    std::uint64_t accepted_ms = 0;
    std::list<std::uint64_t>::iterator hs;  // in handshakes_ while handshaking
  };

  static ClientKey client_key(const sockaddr_storage& peer);
  // GnuTLS's transport for a connection (its pointer is the Conn): tls_pull reads up to
  // kTlsReadAhead bytes per recv and hands them out as GnuTLS asks (a record's 5-byte
  // header, then its body: two recv calls per record with GnuTLS's own pull, one per
  // burst of records here); tls_push writes GnuTLS's vectors with one sendmsg.
  static ssize_t tls_pull(void* conn, void* data, std::size_t len);
  // recv(2) of up to `len` bytes, or EAGAIN without a system call when `c` is drained.
  static ssize_t recv_once(Conn& c, void* data, std::size_t len);
  static int tls_pull_timeout(void* conn, unsigned ms);
  static ssize_t tls_push(void* conn, const giovec_t* iov, int iovcnt);
  static constexpr std::size_t kTlsReadAhead = 16 * 1024 + 64;  // a full record and its header
  Conn* find(std::uint64_t id);
  void close_conn(std::uint64_t id);
  void progress(Conn& c, std::uint64_t now_ms);
  // Reads and handles messages until EAGAIN, a pause or the bound per event
  // (kReadsPerEvent reads; over TLS, kReadsPerEvent x kReadSize bytes).
  void read_input(std::uint64_t id);
  // Writes (or queues) tls_batch_ on its connection and closes the batch.
  void flush_tls_batch();
  // Writes (or queues) tls_batch_ on connection `id` and empties it; write_or_queue's result.
  int write_tls_batch(std::uint64_t id, Conn& c);
  // Hands complete buffered messages to the handler. False when the connection closed.
  bool process_input(std::uint64_t id);
  // Writes what the socket takes. False when the connection was closed.
  bool flush(std::uint64_t id, Conn& c);
  // Pause/resume/close-after-eof decisions, then the epoll mask. False when closed.
  bool settle(std::uint64_t id, Conn& c);
  void pause_accept();
  // TLS: runs the handshake as far as the socket allows. False when the connection closed.
  bool handshake(std::uint64_t id, Conn& c, std::uint64_t now_ms);
  void watch(std::uint64_t id, Conn& c, std::uint32_t events);
  // recv/send on either transport, with their return and errno conventions.
  ssize_t stream_recv(Conn& c, std::uint8_t* buf, std::size_t n);
  ssize_t stream_send(Conn& c, const std::uint8_t* buf, std::size_t n);
  bool tls_pending(const Conn& c) const {
    return c.tls && (gnutls_record_check_pending(c.tls) > 0 || c.tls_ahead_off < c.tls_ahead_len);
  }
  void send_tls(std::uint64_t id, Conn& c, std::span<const std::uint8_t> msg);
  // Writes what the socket takes now and queues the rest. -1: closed, 0: queued, 1: all out.
  int write_or_queue(std::uint64_t id, Conn& c, std::span<const std::uint8_t> bytes);
  // set_proxy: reads the connection's first bytes into `in` and applies the gate's
  // verdict (tcp_proxy_preamble.cpp). True when done and the connection goes on; false
  // when it waits for more bytes or was closed.
  bool proxy_preamble(std::uint64_t id, Conn& c);
  // StreamProtocol: hands the buffered input over. False when the connection closed.
  bool protocol_input(std::uint64_t id, Conn& c);

  int epoll_fd_;
  std::vector<int> listen_fds_;
  std::uint64_t listen_tag_;
  std::uint64_t tag_;
  TcpLimits limits_;
  Handler handler_;
  std::uint64_t next_id_ = 1;
  // DoT: the framed answers written while one connection's input is read (on_event), sent
  // in one write when the read is done; tls_batch_id_ is that connection (0: none).
  std::vector<std::uint8_t> tls_batch_;
  std::uint64_t tls_batch_id_ = 0;
  static constexpr std::size_t kTlsBatchBytes = 16 * 1024;  // a TLS record's plaintext at most
  std::unordered_map<std::uint64_t, Conn> conns_;
  std::list<std::uint64_t> lru_;  // connection ids, least recent progress first
  std::unordered_map<ClientKey, unsigned, ClientKeyHash> per_client_;
  bool accept_paused_ = false;  // every listener: out of descriptors is the process's, not one listener's
  std::vector<std::uint8_t> msg_;  // one message copied out for the handler
  const TlsServerSettings* tls_;   // nullptr: plain TCP
  std::list<std::uint64_t> handshakes_;  // TLS connections handshaking, oldest accept first
  std::vector<std::uint8_t> framed_;  // TLS: length prefix + padded answer, one record
  StreamProtocol* protocol_ = nullptr;  // nullptr: RFC 7766 messages
  ProxyGate* proxy_ = nullptr;          // nullptr: no PROXY headers
};

}  // namespace dnsarena::workers

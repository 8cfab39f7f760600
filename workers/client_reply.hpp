// SPDX-License-Identifier: GPL-3.0-or-later
// The last stage of the worker's query path (query_pipeline.hpp) for a client that
// waited (an upstream query, another worker's query): its answer sent on the transport
// it came by, counted as a miss in the answer metrics, and logged to dnstap.
//
//   UDP        sendto on the listen socket it came on; on a wildcard socket, sendmsg with
//              the address it asked as the source (udp_pktinfo.hpp)
//   TCP, DoT   the connection's server (DoT ids carry kTlsConnBit: tcp_server.hpp)
//   DoH        the request's HTTP/2 stream (doh_server.hpp)
//
// Answers found at once (hits, errors, policy) are sent by the transport that read the
// query (worker.cpp): UDP in one sendmmsg per batch.
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "workers/answer_metrics.hpp"
#include "workers/dnstap_writer.hpp"
#include "workers/doh_server.hpp"
#include "workers/serve_config.hpp"
#include "workers/tcp_server.hpp"
#include "workers/upstream_client.hpp"
#include "workers/worker.hpp"

namespace dnsarena::workers {

// The dnstap protocol of a stream message: DoH when it came on an HTTP/2 stream, DoT when
// its connection is a TLS one (kTlsConnBit), else TCP.
inline TapProtocol stream_protocol(std::uint64_t conn_id, std::uint32_t doh_stream) {
  return doh_stream ? TapProtocol::doh : conn_id & kTlsConnBit ? TapProtocol::dot : TapProtocol::tcp;
}

class ClientReplies {
public:
  // The worker's transports; `tap` (nullable) is read at each reply, so it may be set
  // after construction.
  ClientReplies(const ServeConfig& cfg, const std::vector<UdpListener>& udp, TcpServer& tcp, TcpServer& tls,
                DohServer& doh, AnswerMeter& answers, const std::unique_ptr<DnstapWriter>& tap)
      : cfg_(cfg), udp_(udp), tcp_(tcp), tls_(tls), doh_(doh), answers_(answers), tap_(tap) {}

  // The answer of `n` bytes (0: nothing is sent) to a client that waited: a miss.
  void send(const Waiter& w, const std::uint8_t* out, std::size_t n);
  // An answer on a stream: DoH (`doh_stream` != 0), DoT or TCP.
  void send_stream(std::uint64_t conn_id, std::uint32_t doh_stream, std::span<const std::uint8_t> answer);

  // The client and the server side of a stream connection.
  sockaddr_storage peer_of(std::uint64_t conn_id, std::uint32_t doh_stream) const;
  sockaddr_storage local_of(std::uint64_t conn_id, std::uint32_t doh_stream) const;
  // The worker's answer metrics row (the policy gate counts its matches there too).
  AnswerMeter& meter() { return answers_; }
  // dnstap: the server side of a client's UDP message.
  TapLocal tap_local(unsigned udp_socket, const LocalAddress* local) const {
    return {&cfg_.listen[udp_socket], udp_[udp_socket].pktinfo ? local : nullptr};
  }

private:
  // The server a stream connection is on: DoT ids carry kTlsConnBit.
  TcpServer& stream(std::uint64_t conn_id) const { return conn_id & kTlsConnBit ? tls_ : tcp_; }

  const ServeConfig& cfg_;
  const std::vector<UdpListener>& udp_;
  TcpServer& tcp_;
  TcpServer& tls_;
  DohServer& doh_;
  AnswerMeter& answers_;
  const std::unique_ptr<DnstapWriter>& tap_;
};

}  // namespace dnsarena::workers

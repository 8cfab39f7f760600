// SPDX-License-Identifier: GPL-3.0-or-later
// TcpServer's PROXY v2 preamble (tcp_server.hpp, proxy_protocol.hpp): a connection's
// first bytes, read before the DNS framing and before TLS, judged by the worker's gate.
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include "dns/proxy_v2.hpp"
#include "workers/proxy_protocol.hpp"
#include "workers/tcp_server.hpp"

namespace dnsarena::workers {

bool TcpServer::proxy_preamble(std::uint64_t id, Conn& c) {
  // One header at most per read: what follows it is at most this much, which tls_ahead
  // holds whole (kTlsReadAhead).
  std::uint8_t buf[dns::kProxyV2MaxHeader];
  static_assert(sizeof buf <= kTlsReadAhead, "the bytes read past a header fit GnuTLS's read-ahead");
  for (;;) {
    const ssize_t n = recv_once(c, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // the next event reads on
    if (n <= 0) {  // closed (or failed) before a verdict
      close_conn(id);
      return false;
    }
    c.in.insert(c.in.end(), buf, buf + n);
    const ProxyGate::StreamStart s = proxy_->stream_start(c.peer, c.in);
    if (s.kind == ProxyGate::StreamStart::Kind::wait) continue;
    if (s.kind == ProxyGate::StreamStart::Kind::drop) {
      close_conn(id);
      return false;
    }
    c.proxy_pending = false;
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<long>(s.header));
    if (s.carried) c.peer = s.client;
    if (!c.client_counted) {  // a balancer's connection: bounded per client from now on
      const ClientKey key = client_key(c.peer);
      auto it = per_client_.find(key);
      if (limits_.max_per_client && it != per_client_.end() && it->second >= limits_.max_per_client) {
        close_conn(id);
        return false;
      }
      c.client = key;
      c.client_counted = true;
      ++per_client_[key];
    }
    if (c.tls && !c.in.empty()) {  // the start of the TLS handshake: GnuTLS reads it first (tls_pull)
      c.tls_ahead.reset(new std::uint8_t[kTlsReadAhead]);
      std::memcpy(c.tls_ahead.get(), c.in.data(), c.in.size());
      c.tls_ahead_len = static_cast<std::uint32_t>(c.in.size());
      c.tls_ahead_off = 0;
      c.in.clear();
    }
    return true;
  }
}

}  // namespace dnsarena::workers

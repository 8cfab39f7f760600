// SPDX-License-Identifier: GPL-3.0-or-later
// A slow authoritative for the lab hierarchy (and a slow upstream for tests): a UDP relay
// on one loopback address that
// holds each query for a fixed delay, then passes it to a real server (a knotd of the
// hierarchy) and relays its reply back unchanged. To a resolver it is a server whose RTT
// is the delay plus the real one.
//
// One thread of this process, poll() over the listening socket and one connected socket
// per query in flight (its own source port, so replies need no ID mapping). Bounds: at
// most kRelayInFlight queries held or in flight (a query past that is dropped, as a
// server under load drops), a query unanswered 2 s after it was passed on is forgotten.
// UDP only: a truncated reply sends the resolver to TCP, where nothing listens.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace dnsarena::bench {

inline constexpr std::size_t kRelayInFlight = 256;

class DelayingRelay {
public:
  // Binds listen_ip:listen_port (0: a free port, see port()) and starts the thread,
  // which passes queries on to server_ip:server_port. Throws std::runtime_error when it
  // cannot bind.
  DelayingRelay(const std::string& listen_ip, const std::string& server_ip, std::chrono::milliseconds delay,
                std::uint16_t listen_port = 53, std::uint16_t server_port = 53);
  ~DelayingRelay();
  DelayingRelay(const DelayingRelay&) = delete;
  DelayingRelay& operator=(const DelayingRelay&) = delete;
  std::uint16_t port() const { return port_; }

private:
  void loop();
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::string server_ip_;
  std::uint16_t server_port_;
  std::chrono::milliseconds delay_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace dnsarena::bench

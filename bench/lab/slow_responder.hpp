// SPDX-License-Identifier: GPL-3.0-or-later
// The upstream of `dnsarena-lab bench outage --slow`: a forwarder's upstream that is slow
// for some names only, as a recursive resolver is on cold names. On a thread of the lab
// process, UDP on 127.0.0.1 (an ephemeral port).
//
// Every query for type A is answered NOERROR with one A record (192.0.2.1, TTL 300), other
// types NOERROR with no records; the question is echoed byte for byte (0x20 case kept),
// with an OPT record when the query had one. A name whose first label starts with
// slow<N> (any case: slow1200x3.zone.) is resolved N ms after the first query for it
// arrived (N up to 60,000), as a recursive resolver resolves a cold name: that query and
// every retry that came meanwhile are answered then, a later one at once. Other names are
// answered at once, never held back by the slow ones. The replies wait in a queue ordered
// by due time. With `every_query`, each query for a slow name is answered N ms after it
// arrived instead, retries included (a server far away, or one that is slow every time).
//
// Bounds (it answers a benchmark on loopback, yet input is input): datagrams shorter
// than a header, with QR set or with an unparsable question are dropped; at most
// kSlowResponderQueue replies wait and as many slow names are remembered (past that a
// slow query is dropped, counted).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace dnsarena::bench {

inline constexpr std::size_t kSlowResponderQueue = 65536;

class SlowResponder {
public:
  // Binds and starts the thread. Throws std::runtime_error when it cannot bind.
  explicit SlowResponder(bool every_query = false);
  ~SlowResponder();
  SlowResponder(const SlowResponder&) = delete;
  SlowResponder& operator=(const SlowResponder&) = delete;

  std::uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::uint64_t received() const { return received_.load(); }
  std::uint64_t answered() const { return answered_.load(); }
  std::uint64_t dropped() const { return dropped_.load(); }

private:
  void loop();
  const bool every_query_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> received_{0}, answered_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace dnsarena::bench

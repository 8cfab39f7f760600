// SPDX-License-Identifier: GPL-3.0-or-later
// The synthetic upstream's network loop: one thread, epoll, UDP and TCP on one port.
//
// UDP: datagrams are read until EAGAIN (at most 256 per wake-up), each parsed with
// libknot, answered by UpstreamZone and sent back with sendto. TCP: length-prefixed
// messages, several per connection, answered in order; idle connections close after
// 10 s; at most 512 connections. With a delay, responses wait in a FIFO until due
// (the delay is the same for every response, so FIFO order is due order).
//
// Malformed queries: shorter than a header or with QR set -> dropped; otherwise
// unparsable -> FORMERR. Everything is counted in UpstreamStats.
//
// Black hole: while the `silent` switch given to run() is true, every message read (UDP
// datagram or complete TCP message, the stats query included) is counted as received and
// `blackholed` and dropped without a response: an upstream that stopped answering. TCP
// connections are still accepted and read. Responses already waiting out --delay-ms
// when the switch turns still leave (the switch decides at reading). The stats file keeps
// being written (`silent` is 1 while the switch is on), so an observer can see the state.
//
// Counters while running: the TXT record of "count.stats.<zone>" lists them as
// "key=value" strings (TTL 0; these queries are not counted as answered), and
// --stats-file receives the same counters as one JSON object, rewritten atomically
// (write + rename) every 200 ms when they changed and at exit.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/traffic/upstream_zone.hpp"

namespace dnsarena::sim::traffic {

struct UpstreamStats {
  std::uint64_t received = 0;   // datagrams / TCP messages read
  std::uint64_t answered = 0;   // responses sent, stats queries excluded
  std::uint64_t udp = 0, tcp = 0;  // answered, per transport
  std::uint64_t noerror = 0, nodata = 0, nxdomain = 0, refused = 0, formerr = 0, notimp = 0, other = 0;
  std::uint64_t truncated = 0;  // answered with TC
  std::uint64_t ecs_scoped = 0; // answered with an ECS scope > 0
  std::uint64_t dropped = 0;    // not answered (too short, QR set, send failed)
  std::uint64_t stats_queries = 0;
  std::uint64_t blackholed = 0; // read while silent and dropped (also counted in received)
  std::uint64_t silent = 0;     // a state, not a counter: 1 while the black-hole switch is on

  nlohmann::json to_json() const;
};

struct UpstreamOptions {
  std::string listen = "127.0.0.1";
  std::uint16_t port = 5300;  // 0: an ephemeral port (the same one for UDP and TCP)
  unsigned delay_ms = 0;
  std::string stats_file;     // empty: none
};

class UpstreamServer {
public:
  // Binds UDP and TCP. Throws std::runtime_error with the address on failure.
  UpstreamServer(const UpstreamZone& zone, const UpstreamOptions& options);
  ~UpstreamServer();
  UpstreamServer(const UpstreamServer&) = delete;
  UpstreamServer& operator=(const UpstreamServer&) = delete;

  std::uint16_t port() const { return port_; }
  // Serves until `stop` becomes true (checked at least every 100 ms). While `silent` is
  // true (read before every message; a signal handler may flip it) every query is read
  // and dropped; see "Black hole" above.
  void run(const std::atomic<bool>& stop, const std::atomic<bool>& silent);
  void run(const std::atomic<bool>& stop) { run(stop, kNeverSilent); }
  const UpstreamStats& stats() const { return stats_; }

private:
  static const std::atomic<bool> kNeverSilent;
  struct Impl;
  const UpstreamZone& zone_;
  UpstreamOptions options_;
  std::uint16_t port_ = 0;
  UpstreamStats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dnsarena::sim::traffic

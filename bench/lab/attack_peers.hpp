// SPDX-License-Identifier: GPL-3.0-or-later
// The peers of `dnsarena-lab bench attack`, in this process, on loopback: a small
// authoritative upstream whose data is known in advance (so every answer can be checked),
// a black-hole upstream that never answers, a paced UDP query load that classifies every
// reply, and an off-path spoofer on a raw socket. Each runs on its own thread, and every
// loop is bounded in count and in time.
#pragma once
#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace dnsarena::bench {

// Wire form of a dotted name ("a.b." or "a.b"), lowercase as given.
std::vector<std::uint8_t> wire_name(const std::string& dotted);
// The IPv4 address AuthUpstream gives `name` (wire form, any case): 10.x.y.z from a hash
// of the lowercase name, so a checker knows the real data without asking.
std::array<std::uint8_t, 4> real_address(const std::uint8_t* wire_name, std::size_t len);
// A query (RD, EDNS 1232) for `dotted`, type A.
std::vector<std::uint8_t> make_a_query(std::uint16_t id, const std::vector<std::uint8_t>& qname);
// The first A record's address of the answer section of `reply` (false when there is none).
bool first_a_record(const std::uint8_t* reply, std::size_t len, std::array<std::uint8_t, 4>& address);

// Answers every A query with one A record, real_address(qname), TTL 3600, after
// `delay_ms` (an upstream's round trip: the window a spoofer races). Other types: NXDOMAIN.
class AuthUpstream {
public:
  explicit AuthUpstream(unsigned delay_ms = 0);
  ~AuthUpstream();
  std::uint16_t port() const { return port_; }
  std::uint64_t queries() const { return queries_.load(); }

private:
  void loop();
  int fd_ = -1;
  std::uint16_t port_ = 0;
  unsigned delay_ms_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> queries_{0};
  std::thread thread_;
};

// A UDP port that is bound and never read: queries to it get no answer and no ICMP.
class BlackHole {
public:
  BlackHole();
  ~BlackHole();
  std::uint16_t port() const { return port_; }

private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

struct LoadResult {
  std::uint64_t sent = 0, answered = 0, noerror = 0, nxdomain = 0, servfail = 0, refused = 0, other = 0;
  std::uint64_t lost() const { return sent - answered; }
  double answered_share() const { return sent ? static_cast<double>(answered) / static_cast<double>(sent) : 1.0; }
};

// Sends `count` A queries, the i-th for names(i), at `rate` per second from 16 UDP
// sockets, and waits up to `timeout` after the last for the replies. `on_reply(i, wire,
// len)`, when given, sees every reply. Runs on the calling thread; `sent` counts progress
// for other threads (a spoofer aims at the names just sent). Stops early when `stop` is set.
struct LoadSpec {
  std::uint16_t port = 0;
  std::uint64_t count = 0;
  double rate = 1000;
  std::chrono::milliseconds timeout{3000};
  std::function<std::vector<std::uint8_t>(std::uint64_t)> name;  // wire form
  std::function<void(std::uint64_t, const std::uint8_t*, std::size_t)> on_reply;
  std::atomic<std::uint64_t>* sent = nullptr;
  const std::atomic<bool>* stop = nullptr;
  // When set, at most allowed() queries are sent by any moment (the spoof race paces the
  // names by the forged answers sent, so each name meets its share whatever the speed).
  std::function<std::uint64_t()> allowed;
  // Sending gives up after this long (0: twice count / rate, plus 10 s).
  std::chrono::milliseconds send_limit{0};
};
LoadResult run_load(const LoadSpec& spec);

// An off-path attacker: `count` forged replies from 127.0.0.1:upstream_port to random
// ephemeral ports of 127.0.0.1 with random IDs, each for a name chosen among the last
// `window` names the victim was made to ask (names(i) for i < progress) in a random
// case, answering A `forged`; as fast as it can (sendmmsg of 64), counting into `sent`,
// for at most `limit` or until `stop`. Returns how many were sent.
std::uint64_t run_spoofer(std::uint16_t upstream_port, std::uint64_t count, std::chrono::milliseconds limit,
                          const std::function<std::vector<std::uint8_t>(std::uint64_t)>& names,
                          const std::atomic<std::uint64_t>& progress, unsigned window,
                          std::array<std::uint8_t, 4> forged, std::atomic<std::uint64_t>& sent,
                          const std::atomic<bool>& stop);

}  // namespace dnsarena::bench

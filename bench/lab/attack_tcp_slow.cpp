// SPDX-License-Identifier: GPL-3.0-or-later
// `bench attack` scenario tcp-slow (attack_scenarios.hpp): N slow TCP clients, each from
// its own 127.1.x.y address, trickle one byte every 3 s while a normal TCP query is made
// every second; every normal query must be answered.
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "bench/lab/attack_scenarios.hpp"
#include "common/loopback.hpp"

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A framed TCP query exchange on a fresh connection; true when an answer came in `wait`.
bool tcp_query(std::uint16_t port, std::chrono::milliseconds wait) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = common::loopback_v4(port);
  timeval tv{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    std::vector<std::uint8_t> framed;
    append_tcp_frame(framed, make_a_query(7, wire_name("h0.real")));
    std::uint8_t buf[2];
    ok = ::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(framed.size()) &&
         ::recv(fd, buf, 2, MSG_WAITALL) == 2;
  }
  ::close(fd);
  return ok;
}

// A non-blocking TCP connection from 127.1.x.y (the i-th slow client's own address) to
// the service; -1 when out of descriptors or the address cannot be bound.
int slow_connect(unsigned i, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | ((i / 250) << 8) | (i % 250 + 1));
  sockaddr_in to = common::loopback_v4(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    ::close(fd);
    return -1;
  }
  ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  return fd;
}

}  // namespace

std::vector<AttackRow> run_tcp_slow_scenario(const AttackContext& ctx) {
  const AttackOptions& o = ctx.options;
  AuthUpstream up;
  AttackServe s(ctx, ctx.binary, "slow", up.port());
  attack_load(ctx, s.port(), 1, 100, numbered_names("h", "real"));
  std::vector<int> slow(o.slow_clients, -1);
  std::vector<std::size_t> offset(o.slow_clients, 0);  // bytes of `framed` each has sent
  for (unsigned i = 0; i < o.slow_clients && !ctx.interrupted; ++i) slow[i] = slow_connect(i, s.port());
  std::this_thread::sleep_for(200ms);
  // Each slow client trickles a real query, one byte at a time.
  std::vector<std::uint8_t> framed;
  append_tcp_frame(framed, make_a_query(9, wire_name("h0.real")));
  unsigned asked = 0, answered = 0;
  std::uint64_t reconnects = 0;
  const auto t0 = Clock::now();
  auto last_trickle = t0 - 10s;
  while (Clock::now() - t0 < std::chrono::duration<double>(o.slow_seconds) && !ctx.interrupted) {
    if (Clock::now() - last_trickle >= 3s) {
      // One byte on every slow connection; one the server closed is opened again at once
      // (the attacker keeps its 2,000 clients).
      last_trickle = Clock::now();
      for (unsigned i = 0; i < slow.size(); ++i) {
        std::uint8_t b;
        const bool closed = slow[i] >= 0 && ::recv(slow[i], &b, 1, MSG_DONTWAIT) == 0;
        if (slow[i] >= 0 && !closed &&
            ::send(slow[i], &framed[offset[i] % framed.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) {
          ++offset[i];
          continue;
        }
        if (slow[i] >= 0 && !closed && (errno == EAGAIN || errno == ENOTCONN)) continue;  // still connecting
        if (slow[i] >= 0) ::close(slow[i]);
        slow[i] = slow_connect(i, s.port());
        offset[i] = 0;
        ++reconnects;
      }
    }
    const auto q0 = Clock::now();
    ++asked;
    if (tcp_query(s.port(), 2000ms)) ++answered;
    std::this_thread::sleep_until(q0 + 1s);
  }
  unsigned open = 0;
  for (int fd : slow) {
    if (fd < 0) continue;
    std::uint8_t b;
    const ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++open;
    ::close(fd);
  }
  AttackRow r{"tcp-slow", "", "every normal TCP query answered", asked > 0 && answered == asked, false, {}};
  char buf[220];
  std::snprintf(buf, sizeof buf,
                "%u slow clients (one byte per 3 s, %llu reconnects, %u open at the end): %u of %u normal TCP "
                "queries answered",
                o.slow_clients, static_cast<unsigned long long>(reconnects), open, answered, asked);
  r.figure = buf;
  r.detail = {{"slow_clients", o.slow_clients}, {"reconnects", reconnects}, {"slow_open_at_end", open},
              {"asked", asked}, {"answered", answered}};
  return {r};
}

}  // namespace dnsarena::bench

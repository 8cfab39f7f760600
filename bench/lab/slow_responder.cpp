// SPDX-License-Identifier: GPL-3.0-or-later
#include "bench/lab/slow_responder.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <string>
#include <unordered_map>
#include <queue>
#include <stdexcept>
#include <vector>

namespace dnsarena::bench {

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;

struct Held {
  Clock::time_point due;
  sockaddr_in to;
  Bytes reply;
  bool operator>(const Held& o) const { return due > o.due; }
};

// The reply to `q` (empty: drop it), and the delay its name asks for.
Bytes reply_to(const std::uint8_t* q, std::size_t n, std::chrono::milliseconds& delay) {
  delay = std::chrono::milliseconds(0);
  if (n < 17 || (q[2] & 0x80) || ((q[4] << 8) | q[5]) != 1) return {};
  std::size_t pos = 12;
  while (pos < n && q[pos] != 0) {
    if ((q[pos] & 0xC0) || pos + 1 + q[pos] >= n) return {};
    pos += 1 + q[pos];
  }
  if (pos + 5 > n) return {};
  const std::size_t question_end = pos + 5;
  const unsigned qtype = (q[pos + 1] << 8) | q[pos + 2];
  // slow<N> in the first label, any case.
  const std::size_t label = q[12];
  if (label >= 5 && (q[13] | 0x20) == 's' && (q[14] | 0x20) == 'l' && (q[15] | 0x20) == 'o' && (q[16] | 0x20) == 'w') {
    unsigned ms = 0;
    for (std::size_t i = 17; i < 13 + label && q[i] >= '0' && q[i] <= '9' && ms <= 60000; ++i) ms = ms * 10 + (q[i] - '0');
    delay = std::chrono::milliseconds(std::min(ms, 60000u));
  }
  // An OPT record right after the question: echoed with no options.
  const bool edns = question_end + 11 <= n && q[question_end] == 0 && q[question_end + 1] == 0 && q[question_end + 2] == 41;
  Bytes r(q, q + question_end);
  r[2] = static_cast<std::uint8_t>(0x80 | (q[2] & 0x01));  // QR, RD as asked
  r[3] = 0x80;                                              // RA, NOERROR
  const bool a = qtype == 1;
  r[6] = 0, r[7] = a ? 1 : 0;                // ANCOUNT
  r[8] = 0, r[9] = 0;                        // NSCOUNT
  r[10] = 0, r[11] = edns ? 1 : 0;           // ARCOUNT
  if (a) r.insert(r.end(), {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x01, 0x2C, 0, 4, 192, 0, 2, 1});
  if (edns) r.insert(r.end(), {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0});  // payload 1232
  return r;
}

}  // namespace

SlowResponder::SlowResponder(bool every_query) : every_query_(every_query) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("slow responder: cannot bind a UDP socket on 127.0.0.1");
  }
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { loop(); });
}

SlowResponder::~SlowResponder() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void SlowResponder::loop() {
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held;
  std::unordered_map<std::string, Clock::time_point> resolved_at;  // slow names: when each is resolved
  std::uint8_t buf[4096];
  while (!stop_) {
    auto now = Clock::now();
    while (!held.empty() && held.top().due <= now) {
      const Held& h = held.top();
      ::sendto(fd_, h.reply.data(), h.reply.size(), 0, reinterpret_cast<const sockaddr*>(&h.to), sizeof h.to);
      ++answered_;
      held.pop();
    }
    int wait_ms = 50;
    if (!held.empty())
      wait_ms = static_cast<int>(std::clamp<std::int64_t>(
          std::chrono::ceil<std::chrono::milliseconds>(held.top().due - now).count(), 0, 50));
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) continue;
    for (int i = 0; i < 64; ++i) {
      sockaddr_in from{};
      socklen_t flen = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 0) break;
      ++received_;
      std::chrono::milliseconds delay;
      Bytes reply = reply_to(buf, static_cast<std::size_t>(n), delay);
      if (reply.empty() ||
          (delay.count() > 0 && (held.size() >= kSlowResponderQueue || resolved_at.size() >= kSlowResponderQueue))) {
        ++dropped_;
        continue;
      }
      // The name's resolution: due N ms after its first query (lowercase name as the key).
      Clock::time_point due = Clock::now();
      if (delay.count() > 0 && every_query_) {
        due += delay;
      } else if (delay.count() > 0) {
        std::string name(reinterpret_cast<const char*>(buf + 12), std::min<std::size_t>(255, static_cast<std::size_t>(n) - 12));
        name.resize(std::strlen(name.c_str()));
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        due = resolved_at.try_emplace(name, due + delay).first->second;
      }
      if (due <= Clock::now()) {
        ::sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<const sockaddr*>(&from), flen);
        ++answered_;
      } else {
        held.push({due, from, std::move(reply)});
      }
    }
  }
}

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// An authoritative server that answers FORMERR to any query with EDNS (edns_intolerant_server.hpp).
#include "bench/lab/edns_intolerant_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace dnsarena::bench {

namespace {

using Bytes = std::vector<std::uint8_t>;

const Bytes kNsName = {2, 'n', 's', 10, 'i', 'n', 't', 'o', 'l', 'e', 'r', 'a', 'n', 't', 0};
constexpr std::size_t kBigStrings = 4, kBigStringBytes = 200;

void put16(Bytes& b, unsigned v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}

// One record: owner (wire or a pointer), type, class IN, TTL 300, rdata.
void record(Bytes& out, const Bytes& owner, unsigned type, const Bytes& rdata) {
  out.insert(out.end(), owner.begin(), owner.end());
  put16(out, type);
  put16(out, 1);
  out.insert(out.end(), {0, 0, 1, 44});
  put16(out, static_cast<unsigned>(rdata.size()));
  out.insert(out.end(), rdata.begin(), rdata.end());
}

struct Counters {
  std::atomic<std::uint64_t>& edns;
  std::atomic<std::uint64_t>& plain;
};

// The reply to query `q` (empty: drop it).
Bytes reply_to(const std::uint8_t* q, std::size_t n, bool tcp, const std::uint8_t (&self)[4], Counters c) {
  if (n < 17 || (q[2] & 0x80) || ((q[4] << 8) | q[5]) != 1) return {};
  std::size_t pos = 12;
  std::string name;  // lowercase, dotted without the final dot
  while (pos < n && q[pos] != 0) {
    if ((q[pos] & 0xC0) || pos + 1 + q[pos] >= n) return {};
    if (!name.empty()) name += '.';
    for (std::size_t i = 1; i <= q[pos]; ++i) name += static_cast<char>(std::tolower(q[pos + i]));
    pos += 1 + q[pos];
  }
  if (pos + 5 > n) return {};
  const std::size_t question_end = pos + 5;
  const unsigned qtype = (q[pos + 1] << 8) | q[pos + 2];
  const bool edns = ((q[10] << 8) | q[11]) > 0 && question_end + 11 <= n && q[question_end] == 0 &&
                    q[question_end + 1] == 0 && q[question_end + 2] == 41;
  Bytes r(q, q + question_end);
  r[2] = static_cast<std::uint8_t>(0x80 | (q[2] & 0x79));  // QR, opcode and RD as asked
  r[3] = 0;
  for (int i = 6; i < 12; ++i) r[i] = 0;
  if (edns) {
    ++c.edns;
    r[3] = 1;  // FORMERR, no OPT in the reply
    return r;
  }
  ++c.plain;
  r[2] |= 0x04;  // AA
  const Bytes at_qname = {0xC0, 0x0C};
  unsigned answers = 0, additional = 0;
  if (name.empty() && qtype == 2) {
    record(r, at_qname, 2, kNsName);
    ++answers;
    record(r, kNsName, 1, Bytes(self, self + 4));
    ++additional;
  } else if (name == "ns.intolerant" && qtype == 1) {
    record(r, at_qname, 1, Bytes(self, self + 4));
    ++answers;
  } else if (name.rfind("big.", 0) == 0 && qtype == 16) {
    if (!tcp) {
      r[2] |= 0x02;  // TC: over 512 bytes without EDNS
      return r;
    }
    for (std::size_t i = 0; i < kBigStrings; ++i) {
      Bytes txt(1 + kBigStringBytes, static_cast<std::uint8_t>('a' + i));
      txt[0] = kBigStringBytes;
      record(r, at_qname, 16, txt);
      ++answers;
    }
  } else if (qtype == 1) {
    record(r, at_qname, 1, {192, 0, 2, 77});
    ++answers;
  }
  r[7] = static_cast<std::uint8_t>(answers);
  r[11] = static_cast<std::uint8_t>(additional);
  return r;
}

int bound_socket(int type, const sockaddr_in& a) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0 && type == SOCK_STREAM) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Reads exactly `len` bytes within the deadline; false on error, close or time out.
bool read_exact(int fd, std::uint8_t* out, std::size_t len, std::chrono::steady_clock::time_point until) {
  for (std::size_t got = 0; got < len;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const ssize_t n = ::recv(fd, out + got, len - got, 0);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

EdnsIntolerantServer::EdnsIntolerantServer() {
  for (unsigned host = 1; host < 255 && udp_ < 0; ++host) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    const std::string text = "127.54.0." + std::to_string(host);
    ::inet_pton(AF_INET, text.c_str(), &a.sin_addr);
    const int u = bound_socket(SOCK_DGRAM, a);
    if (u < 0) continue;
    const int t = bound_socket(SOCK_STREAM, a);
    if (t < 0) {
      ::close(u);
      continue;
    }
    udp_ = u;
    tcp_fd_ = t;
    address_ = text;
    std::memcpy(v4_, &a.sin_addr, 4);
  }
  if (udp_ < 0) throw std::runtime_error("EDNS-intolerant server: no 127.54.0.N has port 53 free (needs root)");
  thread_ = std::thread([this] { loop(); });
}

EdnsIntolerantServer::~EdnsIntolerantServer() {
  stop_ = true;
  thread_.join();
  ::close(udp_);
  ::close(tcp_fd_);
}

std::string EdnsIntolerantServer::write_root_hints(const std::string& dir) const {
  const std::string path = dir + "/intolerant.hints";
  std::ofstream(path) << ". 3600 NS ns.intolerant.\nns.intolerant. 3600 A " << address_ << "\n";
  return path;
}

void EdnsIntolerantServer::loop() {
  std::uint8_t buf[4096];
  const Counters c{edns_, plain_};
  while (!stop_) {
    pollfd p[2] = {{udp_, POLLIN, 0}, {tcp_fd_, POLLIN, 0}};
    if (::poll(p, 2, 50) <= 0) continue;
    if (p[0].revents & POLLIN) {
      for (int i = 0; i < 64; ++i) {
        sockaddr_in from{};
        socklen_t flen = sizeof from;
        const ssize_t n = ::recvfrom(udp_, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &flen);
        if (n < 0) break;
        const Bytes r = reply_to(buf, static_cast<std::size_t>(n), false, v4_, c);
        if (!r.empty()) ::sendto(udp_, r.data(), r.size(), 0, reinterpret_cast<const sockaddr*>(&from), flen);
      }
    }
    if (p[1].revents & POLLIN) {
      const int conn = ::accept4(tcp_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      std::uint8_t len[2];
      if (read_exact(conn, len, 2, until)) {
        const std::size_t size = (std::size_t{len[0]} << 8) | len[1];
        if (size <= sizeof buf && read_exact(conn, buf, size, until)) {
          ++tcp_;
          Bytes r = reply_to(buf, size, true, v4_, c);
          if (!r.empty()) {
            const std::uint8_t prefix[2] = {static_cast<std::uint8_t>(r.size() >> 8), static_cast<std::uint8_t>(r.size())};
            r.insert(r.begin(), prefix, prefix + 2);
            ::send(conn, r.data(), r.size(), MSG_NOSIGNAL);
          }
        }
      }
      ::close(conn);
    }
  }
}

}  // namespace dnsarena::bench

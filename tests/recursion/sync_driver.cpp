// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/recursion/sync_driver.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "dns/query_builder.hpp"
#include "dnssec/rrset.hpp"

namespace dnsarena::test {

namespace {

int wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count()));
}

std::optional<common::Bytes> udp_ask(const recursion::ServerAddress& to, const common::Bytes& q,
                                     std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = to.to_sockaddr();
  std::optional<common::Bytes> out;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 && ::send(fd, q.data(), q.size(), 0) > 0 &&
      wait_readable(fd, timeout) == 1) {
    std::uint8_t buf[65535];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) out = common::Bytes(buf, buf + n);
  }
  ::close(fd);
  return out;
}

std::optional<common::Bytes> tcp_ask(const recursion::ServerAddress& to, const common::Bytes& q,
                                     std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = to.to_sockaddr();
  std::optional<common::Bytes> out;
  common::Bytes msg{static_cast<std::uint8_t>(q.size() >> 8), static_cast<std::uint8_t>(q.size())};
  msg += q;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 &&
      ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(msg.size())) {
    common::Bytes in;
    while (wait_readable(fd, timeout) == 1) {
      std::uint8_t buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, buf + n);
      if (in.size() >= 2 && in.size() >= 2u + ((in[0] << 8) | in[1])) {
        out = in.substr(2, (in[0] << 8) | in[1]);
        break;
      }
    }
  }
  ::close(fd);
  return out;
}

// The reply's ID and question bytes (case included) are the query's.
bool echoes(const common::Bytes& reply, const common::Bytes& query, std::size_t question_bytes) {
  return reply.size() >= 12 + question_bytes && reply[0] == query[0] && reply[1] == query[1] &&
         std::memcmp(reply.data() + 12, query.data() + 12, question_bytes) == 0;
}

}  // namespace

recursion::Result resolve_sync(recursion::IterativeResolution& r, DriverCounts& counts,
                               std::chrono::milliseconds timeout) {
  static std::mt19937 rng(std::random_device{}());
  recursion::Query q;
  while (r.need(q) == recursion::IterativeResolution::Step::query) {
    common::Bytes name = q.qname;
    for (std::size_t i = 0; i < name.size(); i += name[i] + 1u)
      for (std::size_t k = i + 1; k <= i + name[i] && k < name.size(); ++k)
        if (name[k] >= 'a' && name[k] <= 'z' && (rng() & 1)) name[k] = static_cast<std::uint8_t>(name[k] - 32);
    const auto id = static_cast<std::uint16_t>(rng());
    common::Bytes query = dns::build_query({.id = id, .qname = name, .qtype = q.qtype});
    query[2] &= static_cast<std::uint8_t>(~0x01);  // RD clear: an iterative query
    const std::size_t question_bytes = name.size() + 4;
    ++counts.udp;
    std::optional<common::Bytes> wire = udp_ask(q.server, query, timeout);
    dnssec::Response reply;
    std::string error;
    bool ok = wire && echoes(*wire, query, question_bytes) && dnssec::parse_response(*wire, reply, error);
    if (wire && !echoes(*wire, query, question_bytes)) ++counts.case_mismatches;
    if (ok && reply.tc) {
      ++counts.tcp;
      wire = tcp_ask(q.server, query, timeout);
      ok = wire && echoes(*wire, query, question_bytes) && dnssec::parse_response(*wire, reply, error) && !reply.tc;
    }
    if (ok) {
      r.provide(reply);
    } else {
      ++counts.failures;
      r.provide_failure();
    }
  }
  return r.result();
}

}  // namespace dnsarena::test

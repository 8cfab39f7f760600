// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/traffic/load_client.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/ip_address.hpp"
#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::traffic {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kIds = 65536;
constexpr unsigned kBurst = 64;

struct Slot {
  bool used = false;
  std::uint64_t k = 0;
  Clock::time_point sent;
  Bytes qname;
  std::uint16_t qtype = 0;
};

struct InFlight {
  unsigned sock;
  std::uint16_t id;
  std::uint64_t k;
  Clock::time_point sent;
};

int connect_udp(const std::string& host, std::uint16_t port) {
  sockaddr_storage ss{};
  const socklen_t len = common::ip_socket_address(host, port, ss);
  if (len == 0) throw std::invalid_argument("--server: not an IPv4 or IPv6 address: '" + host + "'");
  const int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  // Connected: the kernel delivers only datagrams from the server's address and port.
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("connect " + host + " port " + std::to_string(port) + ": " + std::strerror(err));
  }
  return fd;
}

double percentile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const auto idx = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
  return v[idx];
}

}  // namespace

std::string rcode_name(std::uint16_t rcode) {
  static const char* const kNames[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
  return rcode < 6 ? kNames[rcode] : "RCODE" + std::to_string(rcode);
}

nlohmann::json LoadResult::to_json() const {
  nlohmann::json rc = nlohmann::json::object();
  for (auto [code, n] : rcodes) rc[rcode_name(code)] = n;
  return {{"sent", sent},
          {"answered", answered},
          {"lost", lost},
          {"unmatched", unmatched},
          {"send_errors", send_errors},
          {"truncated", truncated},
          {"nodata", nodata},
          {"ecs_scoped", ecs_scoped},
          {"rcodes", rc},
          {"target_qps", target_qps},
          {"achieved_qps", achieved_qps()},
          {"elapsed_s", elapsed_s},
          {"latency_ms_p50", latency_ms_p50},
          {"latency_ms_p90", latency_ms_p90},
          {"latency_ms_p99", latency_ms_p99},
          {"latency_ms_max", latency_ms_max}};
}

std::string LoadResult::table() const {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3);
  o << "sent        " << sent << "\n"
    << "answered    " << answered << "\n"
    << "lost        " << lost << "   (no matching answer within the timeout)\n"
    << "unmatched   " << unmatched << "   (responses with an unknown ID or another question)\n";
  if (send_errors) o << "send errors " << send_errors << "\n";
  o << "rate        target " << std::setprecision(0) << target_qps << " q/s, achieved " << achieved_qps()
    << " q/s\n" << std::setprecision(3);
  o << "rcodes     ";
  for (auto [code, n] : rcodes) o << " " << rcode_name(code) << "=" << n;
  o << "  (of NOERROR: NODATA=" << nodata << ")  TC=" << truncated << "  ECS-scoped=" << ecs_scoped << "\n";
  o << "latency ms  p50 " << latency_ms_p50 << "  p90 " << latency_ms_p90 << "  p99 " << latency_ms_p99
    << "  max " << latency_ms_max << "\n";
  return o.str();
}

LoadResult run_load(const QueryStream& stream, const LoadOptions& o) {
  return run_load([&stream](std::uint64_t k, StreamQuery& q) { stream.query(k, q); }, o);
}

LoadResult run_load(const QuerySource& source, const LoadOptions& o) {
  if (!(o.rate > 0)) throw std::invalid_argument("--rate must be > 0");
  const unsigned needed = static_cast<unsigned>(std::ceil(o.rate * o.timeout_s / 40000.0));
  const unsigned nsock = std::max({o.sockets, needed, 1u});
  std::vector<int> fds;
  std::vector<pollfd> pfds;
  try {
    for (unsigned s = 0; s < nsock; ++s) {
      fds.push_back(connect_udp(o.host, o.port));
      pfds.push_back(pollfd{fds.back(), POLLIN, 0});
    }
  } catch (...) {
    for (int fd : fds) ::close(fd);
    throw;
  }
  std::vector<std::vector<Slot>> slots(nsock, std::vector<Slot>(kIds));
  std::vector<std::uint16_t> next_id(nsock);
  for (unsigned s = 0; s < nsock; ++s) next_id[s] = static_cast<std::uint16_t>(SplitMix64(s + 77).next());
  std::deque<InFlight> inflight;
  std::vector<float> latencies;
  latencies.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(o.queries, 50'000'000)));

  LoadResult r;
  r.target_qps = o.rate;
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  const auto start = Clock::now();
  Clock::time_point last_send = start;
  std::uint64_t k = 0;
  StreamQuery q;
  dns::Message resp;
  std::uint8_t buf[65536];

  auto send_one = [&](Clock::time_point now) {
    source(k, q);
    const unsigned s = static_cast<unsigned>(k % nsock);
    std::uint16_t id = next_id[s];
    for (std::size_t tries = 0; slots[s][id].used && tries < kIds; ++tries) ++id;
    next_id[s] = static_cast<std::uint16_t>(id + 1);
    Slot& slot = slots[s][id];
    if (slot.used) {  // every ID of this socket in flight: count it as a send error
      ++r.send_errors;
      ++k;
      return;
    }
    const Bytes wire = dns::build_query({.id = id, .qname = q.qname, .qtype = q.qtype, .edns = o.edns, .ecs = q.ecs});
    if (::send(fds[s], wire.data(), wire.size(), 0) < 0) {
      ++r.send_errors;
      ++k;
      return;
    }
    slot.used = true;
    slot.k = k;
    slot.sent = now;
    slot.qname = q.qname;
    slot.qtype = q.qtype;
    inflight.push_back({s, id, k, now});
    ++r.sent;
    ++k;
    last_send = now;
  };

  auto receive = [&](unsigned s) {
    for (;;) {
      const ssize_t n = ::recv(fds[s], buf, sizeof buf, 0);
      if (n < 0) return;  // EAGAIN, or ICMP unreachable reported as ECONNREFUSED
      const auto now = Clock::now();
      const std::span<const std::uint8_t> wire(buf, static_cast<std::size_t>(n));
      // The records only for a caller that sees each answer (they cost a parse).
      if (dns::parse_message(wire, resp, static_cast<bool>(o.on_answer)) != dns::ParseStatus::ok || !resp.qr) {
        ++r.unmatched;
        continue;
      }
      Slot& slot = slots[s][resp.id];
      if (!slot.used || resp.qtype != slot.qtype || resp.qname.size() != slot.qname.size() ||
          !wire::wire_names_equal_ci(resp.qname, slot.qname)) {
        ++r.unmatched;
        continue;
      }
      slot.used = false;
      ++r.answered;
      ++r.rcodes[resp.rcode];
      const std::uint16_t ancount = static_cast<std::uint16_t>((wire[6] << 8) | wire[7]);
      if (resp.rcode == 0 && ancount == 0 && !resp.tc) ++r.nodata;
      if (resp.tc) ++r.truncated;
      if (resp.ecs.present && resp.ecs.scope_prefix > 0) ++r.ecs_scoped;
      latencies.push_back(std::chrono::duration<float, std::milli>(now - slot.sent).count());
      if (o.on_answer) o.on_answer(slot.k, std::chrono::duration<double, std::milli>(now - slot.sent).count(), resp);
    }
  };

  while (k < o.queries || !inflight.empty()) {
    auto now = Clock::now();
    if (k < o.queries) {
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const auto due = std::min<std::uint64_t>(o.queries, static_cast<std::uint64_t>(elapsed * o.rate) + 1);
      for (unsigned b = 0; b < kBurst && k < due; ++b) send_one(now);
    }
    // Expire the oldest queries.
    now = Clock::now();
    while (!inflight.empty() && inflight.front().sent + timeout <= now) {
      const InFlight& f = inflight.front();
      Slot& slot = slots[f.sock][f.id];
      if (slot.used && slot.k == f.k) {
        slot.used = false;
        ++r.lost;
      }
      inflight.pop_front();
    }
    // Drop answered entries at the front so the deque stays short.
    while (!inflight.empty()) {
      const InFlight& f = inflight.front();
      const Slot& slot = slots[f.sock][f.id];
      if (slot.used && slot.k == f.k) break;
      inflight.pop_front();
    }
    if (k >= o.queries && inflight.empty()) break;
    Clock::time_point wake = inflight.empty() ? now + std::chrono::milliseconds(50) : inflight.front().sent + timeout;
    if (k < o.queries) {
      const auto next = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(static_cast<double>(k) / o.rate));
      wake = std::min(wake, next);
    }
    const auto wait_ns = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count());
    const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
    if (::ppoll(pfds.data(), pfds.size(), &ts, nullptr) > 0)
      for (unsigned s = 0; s < nsock; ++s)
        if (pfds[s].revents) receive(s);
  }
  const auto end = Clock::now();
  for (int fd : fds) ::close(fd);
  r.elapsed_s = std::chrono::duration<double>(end - start).count();
  r.send_s = r.sent > 1 ? std::chrono::duration<double>(last_send - start).count() * static_cast<double>(r.sent) /
                              static_cast<double>(r.sent - 1)
                        : r.elapsed_s;
  r.latency_ms_p50 = percentile(latencies, 0.50);
  r.latency_ms_p90 = percentile(latencies, 0.90);
  r.latency_ms_p99 = percentile(latencies, 0.99);
  r.latency_ms_max = latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());
  return r;
}

}  // namespace dnsarena::sim::traffic

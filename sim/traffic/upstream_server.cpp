// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/traffic/upstream_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "common/ip_address.hpp"
#include "dns/message.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::sim::traffic {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxTcpConnections = 512;
constexpr auto kTcpIdle = std::chrono::seconds(10);
constexpr auto kStatsFilePeriod = std::chrono::milliseconds(200);

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Parses "127.0.0.1" or "::1" into a sockaddr with `port`.
socklen_t make_address(const std::string& host, std::uint16_t port, sockaddr_storage& ss) {
  const socklen_t len = common::ip_socket_address(host, port, ss);
  if (len == 0) throw std::invalid_argument("--listen: not an IPv4 or IPv6 address: '" + host + "'");
  return len;
}

std::uint16_t port_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  return ss.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port)
                                 : ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

// Response to "count.stats.<zone> TXT": one TXT record of "key=value" strings.
void stats_response(const dns::Message& q, const UpstreamStats& s, Bytes& out) {
  dns::Message plain = q;
  plain.edns = false;  // the answer carries no OPT: the counters are all it says
  UpstreamZone::error_response(plain, 0, out);
  Bytes rdata;
  const nlohmann::json counters = s.to_json();  // named: items() must not outlive it
  for (const auto& kv : counters.items()) {
    const std::string str = kv.key() + "=" + std::to_string(kv.value().get<std::uint64_t>());
    rdata.push_back(static_cast<std::uint8_t>(str.size()));
    rdata.append(str.begin(), str.end());
  }
  const std::uint8_t rr[] = {0xC0, 12, 0, 16, 0, 1, 0, 0, 0, 0,
                             static_cast<std::uint8_t>(rdata.size() >> 8), static_cast<std::uint8_t>(rdata.size())};
  out.append(rr, sizeof rr);
  out += rdata;
  out[7] = 1;  // ancount
}

}  // namespace

nlohmann::json UpstreamStats::to_json() const {
  return {{"received", received}, {"answered", answered},   {"udp", udp},           {"tcp", tcp},
          {"noerror", noerror},   {"nodata", nodata},       {"nxdomain", nxdomain}, {"refused", refused},
          {"formerr", formerr},   {"notimp", notimp},       {"other", other},       {"truncated", truncated},
          {"ecs_scoped", ecs_scoped}, {"dropped", dropped}, {"stats_queries", stats_queries},
          {"blackholed", blackholed}, {"silent", silent}};
}

const std::atomic<bool> UpstreamServer::kNeverSilent{false};

// The server's state and the steps of its loop: receiving (UDP, accepting, TCP),
// answering and counting, delivering (now or after the delay), and the timers (idle TCP
// connections, the stats file).
struct UpstreamServer::Impl {
  struct Conn {
    std::uint64_t id = 0;
    Bytes in, out;
    Clock::time_point last_active;
    bool want_write = false;
  };
  struct Pending {
    Clock::time_point due;
    int tcp_fd = -1;  // -1: UDP
    std::uint64_t conn_id = 0;
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    Bytes wire;
  };

  Impl(const UpstreamZone& z, const UpstreamOptions& o, UpstreamStats& s)
      : zone(z), options(o), stats(s), delay(std::chrono::milliseconds(o.delay_ms)) {}

  const UpstreamZone& zone;
  const UpstreamOptions& options;
  UpstreamStats& stats;
  const std::chrono::milliseconds delay;
  int udp = -1, tcp = -1, ep = -1;
  std::unordered_map<int, Conn> conns;
  std::uint64_t next_conn_id = 1;
  std::deque<Pending> pending;
  Bytes stats_name;  // lowercase wire "count.stats.<zone>"
  Bytes response;
  dns::Message query;
  std::uint8_t buf[65536];
  std::string last_stats_json;
  Clock::time_point next_stats_write, next_idle_check;
  const std::atomic<bool>* silent = nullptr;  // the black-hole switch given to run()

  // Receiving.
  void on_event(const epoll_event& e);
  void on_udp();
  void on_accept();
  void on_tcp(int fd, std::uint32_t events);
  bool read_tcp(int fd, Conn& c);  // false: the connection was closed
  // Answering: fills `response`; false when the message is dropped.
  bool answer(std::span<const std::uint8_t> wire, bool udp);
  void count_answer(const ResponseInfo& info, bool udp);
  // Delivering.
  void queue_or_send(Pending&& p);
  void deliver(Pending& p);
  void flush_conn(int fd, Conn& c);
  void close_conn(int fd);
  // Timers.
  int next_timeout_ms() const;  // until the first delayed response is due, at most 100
  void on_tick(Clock::time_point now);
  void close_idle_connections(Clock::time_point now);
  void write_stats_file(bool force);
};

void UpstreamServer::Impl::write_stats_file(bool force) {
  if (options.stats_file.empty()) return;
  const std::string json = stats.to_json().dump();
  if (!force && json == last_stats_json) return;
  const std::string tmp = options.stats_file + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << json << "\n";
  }
  ::rename(tmp.c_str(), options.stats_file.c_str());
  last_stats_json = json;
}

void UpstreamServer::Impl::close_conn(int fd) {
  ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  conns.erase(fd);
}

void UpstreamServer::Impl::flush_conn(int fd, Conn& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      close_conn(fd);
      return;
    }
    c.out.erase(0, static_cast<std::size_t>(n));
  }
  const bool want = !c.out.empty();
  if (want != c.want_write) {
    epoll_event ev{};
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    ::epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    c.want_write = want;
  }
}

void UpstreamServer::Impl::deliver(Pending& p) {
  if (p.tcp_fd < 0) {
    if (::sendto(udp, p.wire.data(), p.wire.size(), 0, reinterpret_cast<sockaddr*>(&p.peer), p.peer_len) < 0)
      ++stats.dropped;
    return;
  }
  auto it = conns.find(p.tcp_fd);
  if (it == conns.end() || it->second.id != p.conn_id) {
    ++stats.dropped;
    return;
  }
  const std::uint8_t len[2] = {static_cast<std::uint8_t>(p.wire.size() >> 8), static_cast<std::uint8_t>(p.wire.size())};
  it->second.out.append(len, 2);
  it->second.out += p.wire;
  flush_conn(p.tcp_fd, it->second);
}

bool UpstreamServer::Impl::answer(std::span<const std::uint8_t> wire, bool is_udp) {
  ++stats.received;
  if (silent->load(std::memory_order_relaxed)) {
    stats.silent = 1;
    ++stats.blackholed;
    return false;
  }
  const dns::ParseStatus st = dns::parse_message(wire, query);
  if (st == dns::ParseStatus::drop || query.qr) {
    ++stats.dropped;
    return false;
  }
  ResponseInfo info;
  if (st == dns::ParseStatus::formerr) {
    UpstreamZone::error_response(query, wire::kRcodeFormErr, response);
    info.rcode = wire::kRcodeFormErr;
  } else {
    Bytes lower = query.qname;
    for (auto& ch : lower) ch = wire::ascii_lower(ch);
    if (query.qtype == wire::kTypeTxt && query.opcode == 0 && lower == stats_name) {
      ++stats.stats_queries;
      stats_response(query, stats, response);
      return true;
    }
    info = zone.respond(query, is_udp, response);
  }
  count_answer(info, is_udp);
  return true;
}

void UpstreamServer::Impl::count_answer(const ResponseInfo& info, bool is_udp) {
  ++stats.answered;
  ++(is_udp ? stats.udp : stats.tcp);
  switch (info.rcode) {
    case wire::kRcodeNoError: ++(info.nodata ? stats.nodata : stats.noerror); break;
    case wire::kRcodeNxDomain: ++stats.nxdomain; break;
    case wire::kRcodeRefused: ++stats.refused; break;
    case wire::kRcodeFormErr: ++stats.formerr; break;
    case wire::kRcodeNotImp: ++stats.notimp; break;
    default: ++stats.other; break;
  }
  if (info.truncated) ++stats.truncated;
  if (info.ecs_scoped) ++stats.ecs_scoped;
}

void UpstreamServer::Impl::queue_or_send(Pending&& p) {
  if (delay.count() == 0) {
    deliver(p);
  } else {
    p.due = Clock::now() + delay;
    pending.push_back(std::move(p));
  }
}

void UpstreamServer::Impl::on_event(const epoll_event& e) {
  const int fd = e.data.fd;
  if (fd == udp) on_udp();
  else if (fd == tcp) on_accept();
  else on_tcp(fd, e.events);
}

void UpstreamServer::Impl::on_udp() {
  for (int n = 0; n < 256; ++n) {
    Pending p;
    p.peer_len = sizeof p.peer;
    const ssize_t len = ::recvfrom(udp, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&p.peer), &p.peer_len);
    if (len < 0) return;
    if (!answer({buf, static_cast<std::size_t>(len)}, true)) continue;
    p.wire = response;
    queue_or_send(std::move(p));
  }
}

void UpstreamServer::Impl::on_accept() {
  for (;;) {
    const int fd = ::accept4(tcp, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(conns.size()) >= kMaxTcpConnections) {
      ::close(fd);
      continue;
    }
    Conn& c = conns[fd];
    c.id = next_conn_id++;
    c.last_active = Clock::now();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
}

bool UpstreamServer::Impl::read_tcp(int fd, Conn& c) {
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      close_conn(fd);
      return false;
    }
    if (n < 0) return true;
    c.in.append(buf, static_cast<std::size_t>(n));
  }
}

void UpstreamServer::Impl::on_tcp(int fd, std::uint32_t events) {
  auto it = conns.find(fd);
  if (it == conns.end()) return;
  Conn& c = it->second;
  c.last_active = Clock::now();
  if (events & EPOLLOUT) {
    flush_conn(fd, c);
    if (!conns.count(fd)) return;
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  if (!read_tcp(fd, c)) return;
  // Every complete length-prefixed message, answered in order.
  const std::uint64_t id = c.id;
  while (c.in.size() >= 2) {
    const std::size_t len = (std::size_t{c.in[0]} << 8) | c.in[1];
    if (c.in.size() < 2 + len) break;
    const Bytes msg = c.in.substr(2, len);
    c.in.erase(0, 2 + len);
    if (!answer(msg, false)) continue;
    Pending p;
    p.tcp_fd = fd;
    p.conn_id = id;
    p.wire = response;
    queue_or_send(std::move(p));
    if (!conns.count(fd)) return;  // closed by a failed send
  }
}

int UpstreamServer::Impl::next_timeout_ms() const {
  if (pending.empty()) return 100;
  const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(pending.front().due - Clock::now());
  return static_cast<int>(std::clamp<long long>(wait.count() + 1, 0, 100));
}

void UpstreamServer::Impl::close_idle_connections(Clock::time_point now) {
  std::vector<int> idle;
  for (auto& [fd, c] : conns)
    if (now - c.last_active > kTcpIdle) idle.push_back(fd);
  for (int fd : idle) close_conn(fd);
}

void UpstreamServer::Impl::on_tick(Clock::time_point now) {
  stats.silent = silent->load(std::memory_order_relaxed) ? 1 : 0;
  while (!pending.empty() && pending.front().due <= now) {
    deliver(pending.front());
    pending.pop_front();
  }
  if (now >= next_idle_check) {
    next_idle_check = now + std::chrono::seconds(1);
    close_idle_connections(now);
  }
  if (now >= next_stats_write) {
    next_stats_write = now + kStatsFilePeriod;
    write_stats_file(false);
  }
}

UpstreamServer::UpstreamServer(const UpstreamZone& zone, const UpstreamOptions& options)
    : zone_(zone), options_(options), impl_(std::make_unique<Impl>(zone_, options_, stats_)) {
  Impl& m = *impl_;
  m.stats_name = Bytes{5, 'c', 'o', 'u', 'n', 't', 5, 's', 't', 'a', 't', 's'} + zone.zone_wire();
  sockaddr_storage ss{};
  socklen_t len = make_address(options.listen, options.port, ss);
  const std::string where = options.listen + " port " + std::to_string(options.port);
  // With port 0 the kernel picks the UDP port; TCP then binds the same number (retried).
  for (int attempt = 0; attempt < 20; ++attempt) {
    m.udp = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (m.udp < 0) throw_errno("socket");
    if (::bind(m.udp, reinterpret_cast<sockaddr*>(&ss), len) != 0) throw_errno("bind UDP " + where);
    port_ = port_of(m.udp);
    sockaddr_storage ts{};
    socklen_t tlen = make_address(options.listen, port_, ts);
    m.tcp = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(m.tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(m.tcp, reinterpret_cast<sockaddr*>(&ts), tlen) == 0 && ::listen(m.tcp, 128) == 0) break;
    const int err = errno;
    ::close(m.tcp);
    ::close(m.udp);
    m.tcp = m.udp = -1;
    errno = err;
    if (options.port != 0 || attempt == 19) throw_errno("bind TCP " + where);
  }
  int rcvbuf = 4 << 20;
  ::setsockopt(m.udp, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  m.ep = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = m.udp;
  ::epoll_ctl(m.ep, EPOLL_CTL_ADD, m.udp, &ev);
  ev.data.fd = m.tcp;
  ::epoll_ctl(m.ep, EPOLL_CTL_ADD, m.tcp, &ev);
}

UpstreamServer::~UpstreamServer() {
  for (auto& [fd, c] : impl_->conns) ::close(fd);
  for (int fd : {impl_->udp, impl_->tcp, impl_->ep})
    if (fd >= 0) ::close(fd);
}

void UpstreamServer::run(const std::atomic<bool>& stop, const std::atomic<bool>& silent) {
  Impl& m = *impl_;
  m.silent = &silent;
  stats_.silent = silent.load() ? 1 : 0;
  m.next_stats_write = Clock::now();
  m.next_idle_check = m.next_stats_write + std::chrono::seconds(1);
  epoll_event events[64];
  while (!stop.load(std::memory_order_relaxed)) {
    const int n = ::epoll_wait(m.ep, events, 64, m.next_timeout_ms());
    for (int i = 0; i < n; ++i) m.on_event(events[i]);
    m.on_tick(Clock::now());
  }
  m.write_stats_file(true);
}

}  // namespace dnsarena::sim::traffic

// SPDX-License-Identifier: GPL-3.0-or-later
// Upstreams over TCP and TLS (a forward zone's `transport`, upstream_stream.hpp): real
// serve processes on loopback. Over TCP, a scripted upstream of this test that answers a
// batch of queries in reverse order on one connection (so each answer is matched by ID,
// not by order) and can cut its connections; over TLS, our own DoT listener as the
// upstream of a second serve (its certificate verified by name, sessions resumed) and
// Unbound's DoT listener (tls-service-key), the reference nobody here wrote.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "common/child_process.hpp"
#include "common/loopback.hpp"
#include "tests/workers/hostile_clients.hpp"
#include "tests/workers/service_fixture.hpp"
#include "tests/workers/tls_test_support.hpp"

using namespace dnsarena::test;
using namespace std::chrono_literals;

namespace {

// A DNS-over-TCP upstream on a thread: it reads queries for "nK.rev.test." on any number
// of connections and answers A 192.0.2.K. On each connection it holds the queries until
// `batch` have come (or 300 ms passed) and answers them last-first. With
// `keepalive_units` >= 0 every answer carries an OPT record with that edns-tcp-keepalive
// TIMEOUT (100 ms units).
class ReverseOrderUpstream {
public:
  explicit ReverseOrderUpstream(std::size_t batch, int keepalive_units = -1)
      : batch_(batch), keepalive_units_(keepalive_units) {
    port_ = dnsarena::common::free_loopback_port();
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = dnsarena::common::loopback_v4(port_);
    if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 16) != 0)
      throw std::runtime_error("cannot listen");
    thread_ = std::thread([this] { loop(); });
  }
  ~ReverseOrderUpstream() {
    stop_ = true;
    thread_.join();
    for (Conn& c : conns_) ::close(c.fd);
    ::close(listen_fd_);
  }
  std::uint16_t port() const { return port_; }
  unsigned connections() const { return accepted_.load(); }
  unsigned queries() const { return queries_.load(); }
  // Closes every connection (as a restarted server would).
  void cut() { cut_ = true; }

private:
  struct Conn {
    int fd;
    std::vector<std::uint8_t> in;
    std::vector<std::vector<std::uint8_t>> held;
    std::chrono::steady_clock::time_point first_held;
  };

  std::vector<std::uint8_t> answer(const std::vector<std::uint8_t>& q) const {
    // Header and question as asked (case too), QR RA, one A record, OPT only with keepalive.
    std::size_t end = 12;
    while (end < q.size() && q[end] != 0) end += q[end] + 1u;
    end += 5;
    std::vector<std::uint8_t> r(q.begin(), q.begin() + static_cast<long>(std::min(end, q.size())));
    r[2] = 0x81;
    r[3] = 0x80;
    r[6] = 0, r[7] = 1, r[8] = 0, r[9] = 0, r[10] = 0, r[11] = 0;
    const unsigned k = static_cast<unsigned>(std::atoi(reinterpret_cast<const char*>(q.data()) + 14));
    const std::uint8_t rr[] = {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x0E, 0x10, 0, 4, 192, 0, 2, static_cast<std::uint8_t>(k)};
    r.insert(r.end(), rr, rr + sizeof rr);
    if (keepalive_units_ >= 0) {
      r[11] = 1;
      const std::uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 6, 0, 11, 0, 2,
                                  static_cast<std::uint8_t>(keepalive_units_ >> 8),
                                  static_cast<std::uint8_t>(keepalive_units_)};
      r.insert(r.end(), opt, opt + sizeof opt);
    }
    return r;
  }

  void flush(Conn& c) {
    for (auto it = c.held.rbegin(); it != c.held.rend(); ++it) {
      const std::vector<std::uint8_t> a = answer(*it);
      std::vector<std::uint8_t> framed{static_cast<std::uint8_t>(a.size() >> 8), static_cast<std::uint8_t>(a.size())};
      framed.insert(framed.end(), a.begin(), a.end());
      ::send(c.fd, framed.data(), framed.size(), MSG_NOSIGNAL);
    }
    c.held.clear();
  }

  void loop() {
    while (!stop_) {
      if (cut_.exchange(false)) {
        for (Conn& c : conns_) ::close(c.fd);
        conns_.clear();
      }
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const Conn& c : conns_) fds.push_back({c.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 20);
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          conns_.push_back({fd, {}, {}, {}});
          ++accepted_;
        }
      }
      for (std::size_t i = 0; i < conns_.size(); ++i) {
        Conn& c = conns_[i];
        if (fds.size() > i + 1 && (fds[i + 1].revents & (POLLIN | POLLHUP))) {
          std::uint8_t buf[4096];
          const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
          if (n == 0) {
            ::close(c.fd);
            conns_.erase(conns_.begin() + static_cast<long>(i--));
            continue;
          }
          if (n > 0) c.in.insert(c.in.end(), buf, buf + n);
          while (c.in.size() >= 2 && c.in.size() >= 2u + ((c.in[0] << 8) | c.in[1])) {
            const std::size_t len = (c.in[0] << 8) | c.in[1];
            if (c.held.empty()) c.first_held = std::chrono::steady_clock::now();
            c.held.emplace_back(c.in.begin() + 2, c.in.begin() + 2 + static_cast<long>(len));
            c.in.erase(c.in.begin(), c.in.begin() + 2 + static_cast<long>(len));
            ++queries_;
          }
        }
        if (!c.held.empty() &&
            (c.held.size() >= batch_ || std::chrono::steady_clock::now() - c.first_held > 300ms))
          flush(c);
      }
    }
  }

  std::size_t batch_;
  int keepalive_units_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::vector<Conn> conns_;  // loop thread only
  std::atomic<bool> stop_{false}, cut_{false};
  std::atomic<unsigned> accepted_{0}, queries_{0};
  std::thread thread_;
};

// Sends the queries at once from their own sockets, then collects the replies (2 s).
std::vector<DnsReply> concurrent_udp(std::uint16_t port, const std::vector<std::vector<std::uint8_t>>& queries) {
  std::vector<int> fds;
  for (const auto& q : queries) {
    const int fd = connected_udp_socket(port);
    REQUIRE(fd >= 0);
    REQUIRE(::send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size()));
    fds.push_back(fd);
  }
  std::vector<DnsReply> replies(queries.size());
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    pollfd p{fds[i], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0))) == 1) {
      std::vector<std::uint8_t> buf(65535);
      const ssize_t n = ::recv(fds[i], buf.data(), buf.size(), 0);
      if (n > 0) replies[i] = parse_reply({buf.begin(), buf.begin() + n});
    }
    ::close(fds[i]);
  }
  return replies;
}

std::string rev_name(unsigned k) { return "n" + std::to_string(k) + ".rev.test"; }
std::string a_rdata(unsigned k) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "1 c00002%02x", k);
  return hex;
}

// Unbound answering local data over DNS over TLS on its own port (and plain DNS on
// another), from a private directory removed at the end.
class UnboundDot {
public:
  UnboundDot(const TestCertificate& cert, unsigned names) {
    dir_ = std::filesystem::temp_directory_path() / ("dnsarena-unbound-dot-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    plain_port_ = dnsarena::common::free_loopback_port();
    tls_port_ = dnsarena::common::free_loopback_port();
    std::ofstream conf(dir_ + "/unbound.conf");
    conf << "server:\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \"" << dir_
         << "\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  num-threads: 1\n"
         << "  do-ip6: no\n  interface: 127.0.0.1@" << plain_port_ << "\n  interface: 127.0.0.1@" << tls_port_
         << "\n  tls-port: " << tls_port_ << "\n  tls-service-key: \"" << cert.key_path()
         << "\"\n  tls-service-pem: \"" << cert.cert_path() << "\"\n  access-control: 127.0.0.0/8 allow\n"
         << "  local-zone: \"ub.test.\" static\n";
    for (unsigned k = 1; k <= names; ++k)
      conf << "  local-data: \"u" << k << ".ub.test. 300 IN A 192.0.2." << k << "\"\n";
    conf << "remote-control:\n  control-enable: no\n";
    conf.close();
    const std::string unbound = std::filesystem::exists("/usr/sbin/unbound") ? "/usr/sbin/unbound" : "unbound";
    child_ = dnsarena::common::ChildProcess({unbound, "-d", "-c", dir_ + "/unbound.conf"},
                                            {.log_path = dir_ + "/unbound.log", .truncate_log = true});
    // Until it listens a query is refused at once (ICMP): asked again for up to 10 s.
    if (!eventually([&] { return udp_exchange(plain_port_, make_query(1, "u1.ub.test", 1), 500ms).answered; }))
      throw std::runtime_error("unbound did not start: " + log());
  }
  ~UnboundDot() {
    child_ = {};
    std::filesystem::remove_all(dir_);
  }
  std::uint16_t tls_port() const { return tls_port_; }
  std::string log() const {
    std::ifstream f(dir_ + "/unbound.log");
    return {std::istreambuf_iterator<char>(f), {}};
  }

private:
  std::string dir_;
  std::uint16_t plain_port_ = 0, tls_port_ = 0;
  dnsarena::common::ChildProcess child_;
};

// The TLS upstream: a serve (1 worker) with DoT for dot.test in front of the test responder.
struct DotUpstream {
  TestCertificate cert{"dot.test"};
  std::uint16_t port = free_port();
  TempConfig config{"tls: {listen: [127.0.0.1:" + std::to_string(port) + "], certificate: " + cert.cert_path() +
                    ", key: " + cert.key_path() + "}\n"};
  Service service{{"--config", config.path()}, 1};
};

std::string tls_zone(std::uint16_t port, const std::string& name, const std::string& ca, const std::string& extra = "") {
  return "forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" + std::to_string(port) +
         "], transport: tls, tls_auth_name: " + name + ", tls_ca_file: " + ca + "}\n" + extra;
}

}  // namespace

TEST_CASE("upstream over TCP: misses pipelined on one kept connection, answers taken out of order by ID",
          "[serve][upstream-stream]") {
  ReverseOrderUpstream up(5);
  TempConfig cfg("forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" + std::to_string(up.port()) +
                 "], transport: tcp}\n");
  // The responder holds a lone query 300 ms: the attempt timeout is well past that.
  Service s({"--config", cfg.path(), "--upstream-timeout-ms", "2000"}, 1);

  std::vector<std::vector<std::uint8_t>> queries;
  for (unsigned k = 1; k <= 5; ++k) queries.push_back(make_query(static_cast<std::uint16_t>(k), rev_name(k), 1));
  const std::vector<DnsReply> replies = concurrent_udp(s.port, queries);
  for (unsigned k = 1; k <= 5; ++k) {
    INFO(rev_name(k));
    REQUIRE(replies[k - 1].answered);
    CHECK(replies[k - 1].rcode() == 0);
    REQUIRE(replies[k - 1].answers.size() == 1);
    CHECK(replies[k - 1].answers[0] == a_rdata(k));  // its own answer, though they came last-first
  }
  CHECK(up.connections() == 1);
  CHECK(up.queries() == 5);
  CHECK(s.total("upstream_connections") == 1);

  // A later miss goes over the same connection.
  const DnsReply sixth = udp_exchange(s.port, make_query(6, rev_name(6), 1));
  REQUIRE(sixth.answered);
  CHECK(sixth.answers == std::vector<std::string>{a_rdata(6)});
  CHECK(up.connections() == 1);

  // The server drops its connections: the next miss is asked on a new one.
  up.cut();
  CHECK(eventually([&] { return tcp_connections_to(up.port()) == 0; }));  // our end saw it and closed
  const DnsReply seventh = udp_exchange(s.port, make_query(7, rev_name(7), 1));
  REQUIRE(seventh.answered);
  CHECK(seventh.answers == std::vector<std::string>{a_rdata(7)});
  CHECK(up.connections() == 2);
  CHECK(s.total("upstream_connections") == 2);
  // Cached: no more upstream queries.
  CHECK(udp_exchange(s.port, make_query(8, rev_name(1), 1)).answers == std::vector<std::string>{a_rdata(1)});
  CHECK(up.queries() == 7);
}

TEST_CASE("upstream over TCP: the server's edns-tcp-keepalive TIMEOUT closes the idle connection sooner than ours",
          "[serve][upstream-stream]") {
  // Our idle timeout is 8 s (the default); this server says 300 ms. We close the idle
  // connection then, and the next miss opens a new one; without the option a pause of 1 s
  // keeps the one connection.
  for (const int units : {3, -1}) {
    INFO("keepalive units " << units);
    ReverseOrderUpstream up(1, units);
    TempConfig cfg("forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" + std::to_string(up.port()) +
                   "], transport: tcp}\n");
    Service s({"--config", cfg.path(), "--upstream-timeout-ms", "2000"}, 1);
    REQUIRE(udp_exchange(s.port, make_query(1, rev_name(1), 1)).answers == std::vector<std::string>{a_rdata(1)});
    REQUIRE(up.connections() == 1);
    const auto idle_from = std::chrono::steady_clock::now();
    if (units >= 0) {
      // The server's 300 ms: our end closes the idle connection, long before our own 8 s.
      CHECK(eventually([&] { return tcp_connections_to(up.port()) == 0; }));
      CHECK(std::chrono::steady_clock::now() - idle_from < 4000ms);
    } else {
      // Without the option an idle second keeps it: the pause itself is what is tested.
      std::this_thread::sleep_for(1000ms);
      CHECK(tcp_connections_to(up.port()) == 1);
    }
    REQUIRE(udp_exchange(s.port, make_query(2, rev_name(2), 1)).answers == std::vector<std::string>{a_rdata(2)});
    CHECK(up.connections() == (units >= 0 ? 2u : 1u));
    CHECK(s.total("upstream_connections") == (units >= 0 ? 2u : 1u));
  }
}

TEST_CASE("upstream over TCP: nobody listening fails fast to SERVFAIL and backs off, a server that comes is used",
          "[serve][upstream-stream]") {
  const std::uint16_t dead = dnsarena::common::free_loopback_port();
  TempConfig cfg("forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" + std::to_string(dead) +
                 "], transport: tcp}\nupstream_attempts: 1\n");
  Service s({"--config", cfg.path(), "--upstream-timeout-ms", "1000"}, 1);
  const auto t0 = std::chrono::steady_clock::now();
  const DnsReply r = udp_exchange(s.port, make_query(1, rev_name(1), 1), 3000ms);
  REQUIRE(r.answered);
  CHECK(r.rcode() == 2);
  CHECK(std::chrono::steady_clock::now() - t0 < 900ms);  // refused at connect: not the 1 s timeout
  CHECK(s.total("upstream_connections") == 0);
  CHECK(eventually([&] { return s.serve->log().find("connect: Connection refused") != std::string::npos; }));
}

TEST_CASE("upstream over TLS: verified by name, one connection per worker, sessions resumed after the idle close",
          "[serve][upstream-stream][tls]") {
  DotUpstream dot;
  Service& back = dot.service;
  TempConfig front_cfg(tls_zone(dot.port, "dot.test", dot.cert.cert_path(), "upstream_idle_timeout_ms: 1000\n"));
  Service front({"--config", front_cfg.path()}, 1);
  for (const char* name : {"a.test", "aaaa.test", "txt.test"}) {
    const std::uint16_t qtype = std::string(name) == "aaaa.test" ? 28 : std::string(name) == "txt.test" ? 16 : 1;
    const DnsReply via_tls = udp_exchange(front.port, make_query(1, name, qtype));
    const DnsReply direct = udp_exchange(back.port, make_query(2, name, qtype));
    INFO(name);
    REQUIRE(via_tls.answered);
    CHECK(via_tls.rcode() == 0);
    CHECK_FALSE(via_tls.answers.empty());
    CHECK(via_tls.answers == direct.answers);
  }
  CHECK(front.total("upstream_connections") == 1);
  CHECK(back.total("queries_dot") == 3);
  CHECK(front.total("upstream_queries") == 3);

  // Idle past upstream_idle_timeout_ms: closed; the next miss reconnects with the ticket.
  CHECK(eventually([&] { return tcp_connections_to(dot.port) == 0; }));
  const DnsReply later = udp_exchange(front.port, make_query(3, "cname.test", 1));
  REQUIRE(later.answered);
  CHECK(later.rcode() == 0);
  CHECK(front.total("upstream_connections") == 2);
  CHECK(front.total("upstream_tls_resumed") == 1);
  CHECK(back.total("queries_dot") == 4);
}

TEST_CASE("upstream over TLS: a certificate for another name is refused, nothing is asked in clear",
          "[serve][upstream-stream][tls]") {
  DotUpstream dot;
  Service& back = dot.service;
  TempConfig front_cfg(tls_zone(dot.port, "resolver.example", dot.cert.cert_path(), "upstream_attempts: 1\n"));
  Service front({"--config", front_cfg.path()}, 1);
  const DnsReply r = udp_exchange(front.port, make_query(1, "a.test", 1), 3000ms);
  REQUIRE(r.answered);
  CHECK(r.rcode() == 2);
  CHECK(front.total("upstream_connections") == 0);
  CHECK(back.total("queries_dot") == 0);
  CHECK(back.total("queries_tcp") == 0);
  CHECK(back.upstream.queries() == 0);
  CHECK(eventually([&] { return front.serve->log().find("certificate") != std::string::npos; }));
}

TEST_CASE("upstream over TLS to Unbound's DoT listener: 40 concurrent misses on one connection",
          "[serve][upstream-stream][tls]") {
  TestCertificate cert("unbound.test");
  UnboundDot unbound(cert, 40);
  TempConfig cfg(tls_zone(unbound.tls_port(), "unbound.test", cert.cert_path()));
  Service s({"--config", cfg.path()}, 1);
  std::vector<std::vector<std::uint8_t>> queries;
  for (unsigned k = 1; k <= 40; ++k)
    queries.push_back(make_query(static_cast<std::uint16_t>(k), "u" + std::to_string(k) + ".ub.test", 1));
  const std::vector<DnsReply> replies = concurrent_udp(s.port, queries);
  unsigned right = 0;
  for (unsigned k = 1; k <= 40; ++k)
    if (replies[k - 1].answered && replies[k - 1].answers == std::vector<std::string>{a_rdata(k)}) ++right;
  INFO(unbound.log());
  CHECK(right == 40);
  CHECK(s.total("upstream_connections") == 1);
  CHECK(s.total("upstream_queries") == 40);
}

TEST_CASE("upstream over TLS: an authenticated hop is not a validated answer: AD passes only with trust_ad",
          "[serve][upstream-stream][tls]") {
  // The TLS upstream passes on its own upstream's AD (it trusts it); the front asks it over TLS.
  TestCertificate cert{"dot.test"};
  const std::uint16_t port = free_port();
  TempConfig back_cfg{"tls: {listen: [127.0.0.1:" + std::to_string(port) + "], certificate: " + cert.cert_path() +
                      ", key: " + cert.key_path() + "}\nupstreams_trust_ad: true\n"};
  Service back{{"--config", back_cfg.path()}, 1};
  REQUIRE(udp_exchange(back.port, make_query(1, "ad.test", 1, 1232, true)).ad());
  const std::string zone = "forward_zones:\n  - {zone: \".\", upstreams: [127.0.0.1:" + std::to_string(port) +
                           "], transport: tls, tls_auth_name: dot.test, tls_ca_file: " + cert.cert_path();
  TempConfig untrusted_cfg{zone + "}\n"};
  Service untrusted({"--config", untrusted_cfg.path()}, 1);
  const DnsReply plain = udp_exchange(untrusted.port, make_query(2, "ad.test", 1, 1232, true));
  REQUIRE(plain.answered);
  CHECK(plain.rcode() == 0);
  CHECK_FALSE(plain.ad());
  TempConfig trusted_cfg{zone + ", trust_ad: true}\n"};
  Service trusted({"--config", trusted_cfg.path()}, 1);
  CHECK(udp_exchange(trusted.port, make_query(3, "ad.test", 1, 1232, true)).ad());
}
